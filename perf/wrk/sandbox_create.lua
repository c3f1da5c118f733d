-- POST /_mock/sandboxes with an empty body: making sandboxes (issue 42).
dofile("perf/wrk/report.lua")
wrk.method = "POST"
