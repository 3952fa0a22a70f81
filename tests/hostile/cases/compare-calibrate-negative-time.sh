# calibrate: a negative kernel time is refused at its cell; no device file is written.
file timings.csv <<'CSV'
kind,flops,bytes,us
matmul,2.1e9,,20
matmul,1.7e10,,-80
matmul,1.4e11,,560
memory,,1e6,5
memory,,1e8,60
CSV
expect 2 "^error: timings\.csv:3:16: column 'us': expected a positive finite time in microseconds, got '-80'$" "no device file"
trainsim calibrate timings.csv --device a100-80gb -o device.yaml
[ -e device.yaml ] || output+=$'\nno device file'
