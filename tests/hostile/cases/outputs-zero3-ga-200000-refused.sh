# ZeRO-3 with 200,000 micro-batches: every unit stays expanded (its gathers gate the layers), so
# the step would hold at least 78 million ops. It is refused from an estimate before anything is reserved,
# located at the key and naming the limit (it used to die of std::bad_alloc, exit 1).
expect 2 'training\.gradient_accumulation: this step would play at least 78,000,000 ops' \
  'over limits\.max_ops = 5,000,000; raise it with limits: \{max_ops: N\}'
trainsim run "$REPO/scenarios/parallel/05_zero3.yaml" --no-diagnosis \
  --set training.gradient_accumulation=200000
