# calibrate: timings each possible but together fitting a negative launch cost (2 us less than
# the rate alone) are refused; kernel_launch was clamped to 0 and a device file written.
file timings.csv <<'CSV'
kind,flops,bytes,seconds
matmul,1e+10,,6.210256410e-05
matmul,1e+11,,6.390256410e-04
matmul,1e+12,,6.408256410e-03
memory,,1e+07,7.808729769e-06
memory,,1e+08,9.608729769e-05
memory,,1e+09,9.788729769e-04
CSV
expect 2 "^error: timings\.csv: the timings fit kernel_launch = -[0-9.]+ us, outside its range \[0, 1000\] us; check the timings for outliers and mixed units; no device file was written$" "no device file"
trainsim calibrate timings.csv --device a100-80gb -o device.yaml
[ -e device.yaml ] || output+=$'\nno device file'
