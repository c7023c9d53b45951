"""`python -m redstring.api` runs the `redstring` command line."""

from redstring.api.cli import main

raise SystemExit(main())
