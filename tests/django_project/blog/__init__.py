"""The blog app the migration page's snippets import ``Post`` from."""
