# calibrate: FLOPs written with a unit are refused at their cell.
file timings.csv <<'CSV'
kind,flops,bytes,us
matmul,2.1e9,,20
matmul,17 GFLOP,,80
matmul,1.4e11,,560
memory,,1e6,5
memory,,1e8,60
CSV
expect 2 "^error: timings\.csv:3:8: column 'flops': expected a positive finite number, got '17 GFLOP'$" "no device file"
trainsim calibrate timings.csv --device a100-80gb -o device.yaml
[ -e device.yaml ] || output+=$'\nno device file'
