"""Serving: which document a request asks for, its validators, its coding, and the
flow that answers it for the sync and the async fronts."""
