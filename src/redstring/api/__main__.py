"""`python -m redstring.api` runs the `redstring` command line."""

from redstring.api.entry_point import main

raise SystemExit(main())
