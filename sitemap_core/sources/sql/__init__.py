"""Sources over SQL tables: SQLite (standard library) and SQLAlchemy Core."""
