# 100,000 nested '[' is refused with the nesting limit and where it was passed, not "bad file".
head -c 100000 /dev/zero | tr '\0' '[' | { printf 'name: '; cat; echo; } >s.yaml
expect 2 's\.yaml:1:[0-9]+' 'nesting too deep' '500 levels'
trainsim run s.yaml
