"""The real servers the project checks itself against (`nox -s peers`); not part of the package."""
