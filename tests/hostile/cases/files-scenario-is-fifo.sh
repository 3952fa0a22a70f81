# A FIFO as the scenario is refused at once: reading it would wait for a writer forever.
mkfifo pipe.yaml
expect 2 'pipe\.yaml: is not a regular file'
trainsim run pipe.yaml
