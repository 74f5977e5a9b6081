-- Prints wrk's exact counters as one JSON line (its own summary rounds them): bench/lib/wrk.js reads it.
done = function(summary, latency, requests)
    local errors = summary.errors
    io.write(string.format(
        'WRK-JSON {"requests":%d,"bytes":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,' ..
        '"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\n',
        summary.requests, summary.bytes, summary.duration,
        latency:percentile(50), latency:percentile(99),
        errors.connect, errors.read, errors.write, errors.status, errors.timeout))
end
