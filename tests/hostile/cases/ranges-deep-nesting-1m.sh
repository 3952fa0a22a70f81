# A million nested '{' neither overflows the stack nor says "bad file".
head -c 1000000 /dev/zero | tr '\0' '{' | { printf 'name: '; cat; echo; } >s.yaml
expect 2 's\.yaml:1:[0-9]+' 'nesting too deep' '500 levels'
trainsim run s.yaml
