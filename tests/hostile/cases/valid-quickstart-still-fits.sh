# The suite's control: a valid scenario answers FITS with exit 0.
expect 0 '^FITS'
trainsim run "$REPO/scenarios/quickstart.yaml" --no-diagnosis
