"""Allow ``python -m eksmllint``."""

from eksmllint.cli import main

if __name__ == "__main__":  # pragma: no cover - exercised through the CLI tests
    main()
