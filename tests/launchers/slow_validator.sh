#!/bin/sh
# A validator that never finishes, for the cancel tests. Its first argument is the "checkpoint" the
# test passes (a path inside the test's own temporary folder): it records its pid in "$1.pid", prints
# one progress line like ckpt-validate does, and waits. The test cancels the launch and checks that
# this process, on the far side of ssh or srun, has ended.
echo $$ >"$1.pid"
echo '{"event":"progress","stage":"environment","index":1,"of":10,"message":"slow validator started"}'
exec sleep 600
