"""`python -m redstring` runs the `redstring` command line, as `python -m redstring.api`
does."""

from redstring.api.entry_point import main

raise SystemExit(main())
