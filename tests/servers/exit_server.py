"""A stdio "server" that fails at once, explaining why on stderr, as real ones do."""

import sys

sys.stderr.write("exit_server: starting\n")
sys.stderr.write("Error: GITHUB_TOKEN is not set\n")
sys.exit(3)
