"""`python -m redstring` runs the `redstring` command line, as `python -m redstring.api`
does."""

from redstring.api.cli import main

raise SystemExit(main())
