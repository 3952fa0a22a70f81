# A directory given as a shard is refused (it used to merge 0 points and exit 0).
mkdir -p shards
expect 2 'shards: is a directory; merge takes the shard files themselves'
trainsim merge out.csv shards
