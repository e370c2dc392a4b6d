#!/bin/sh
# A validator that crashes mid-run (SIGSEGV after its first progress line), for the tests that check a
# remote crash gives a clear report and leaves the desktop app unharmed.
echo '{"event":"progress","stage":"environment","index":1,"of":10,"message":"about to crash"}'
kill -SEGV $$
