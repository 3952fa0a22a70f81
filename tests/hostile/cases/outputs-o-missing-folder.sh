# -o into a folder that does not exist: the path and the system's reason.
expect 2 'no/such/folder/report.txt: --output: cannot write this file: No such file or directory'
trainsim run "$REPO/scenarios/quickstart.yaml" --no-diagnosis -o no/such/folder/report.txt
