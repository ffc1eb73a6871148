"""A stdio "server" that never answers initialize (and ignores its stdin closing)."""

import sys
import time

sys.stderr.write("hang_server: waiting for a licence server that never answers\n")
sys.stderr.flush()
time.sleep(3600)
