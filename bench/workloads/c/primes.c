// Count the primes below a limit with a sieve of Eratosthenes.
// poke(buffer, index, value) stores one byte; it is provided by the host.
char *sieve;
int limit = 100000;

int is_marked(int p) {
    return p > 2 && p % 2 == 0;
}

int count_primes(int n) {
    int count = 0;
    for (int i = 2; i < n; i = i + 1) {
        poke(sieve, i, 1);
    }
    for (int p = 2; p * p < n; p = p + 1) {
        if (sieve[p] && !is_marked(p)) {
            for (int m = p * p; m < n; m = m + p) {
                poke(sieve, m, 0);
            }
        }
    }
    for (int k = 2; k < n; k = k + 1) {
        count = count + sieve[k];
    }
    return count;
}

int main(int argc, char **argv) {
    sieve = malloc(limit + 1);
    if (sieve == 0) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    int n = 10;
    while (n <= limit) {
        printf("pi(%d) = %d\n", n, count_primes(n));
        n = n * 10;
    }
    free(sieve);
    return 0;
}