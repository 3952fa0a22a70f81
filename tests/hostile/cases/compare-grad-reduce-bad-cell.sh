# compare: a grad_reduce cell that names no modelled reduction (here Megatron's own
# --DDP-impl word) is refused at its cell.
file measured.csv <<'CSV'
# layers,hidden size,attention heads,sequence length,micro batch,global batch,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms),ddp
30,3072,32,2048,8,512,1,64,1,3566.5,local
CSV
expect 2 "^error: measured\\.csv:2:37: column 'ddp': expected overlapped, after_backward or after_backward_in_place, got 'local'$"
trainsim compare measured.csv --map grad_reduce=ddp
