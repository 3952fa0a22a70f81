// The translation unit that compiles the tests' precompiled header (tests/CMakeLists.txt); an
// executable so that its code-generation flags are the test executables'.
int main() { return 0; }
