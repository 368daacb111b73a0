// Placeholder until the shepherd lands.
int main() { return 0; }
