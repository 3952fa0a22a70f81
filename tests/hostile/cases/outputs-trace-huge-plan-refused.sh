# A trace needs the expanded plan (every layer an op): 400,000 micro-batches pass the scenario's
# check for a fast-play run but are refused for the trace before lowering reserves gigabytes.
expect 2 'this step would play at least .* ops .*expanded for a trace or memory series' \
  'limits\.max_ops'
trainsim run "$REPO/scenarios/quickstart.yaml" --no-diagnosis --trace t.json \
  --set training.gradient_accumulation=400000
