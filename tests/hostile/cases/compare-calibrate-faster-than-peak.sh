# calibrate: a GEMM timed faster than the A100's peak (a unit mix-up) is refused, not clamped.
file timings.csv <<'CSV'
kind,flops,bytes,us
matmul,2.1e9,,20
matmul,1.7e10,,0.08
matmul,1.4e11,,560
memory,,1e6,5
memory,,1e8,60
CSV
expect 2 "^error: timings\.csv:3:16: column 'us': a matmul of 1\.7e\+10 FLOPs takes at least 5\.449e-05 s on a100-80gb at its 16-bit peak, but was timed at 8e-08 s; check the time unit, --device and --fp32$" "no device file"
trainsim calibrate timings.csv --device a100-80gb -o device.yaml
[ -e device.yaml ] || output+=$'\nno device file'
