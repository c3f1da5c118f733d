-- A plain GET of the URL given to wrk (status by id, by reference, control).
dofile("perf/wrk/report.lua")
