"""A "browser" for ``$BROWSER``: opens the URL it is given and follows the redirects, as a
person's browser does once they approve the sign-in."""

import sys

import httpx2

httpx2.get(sys.argv[1], follow_redirects=True, timeout=30)
