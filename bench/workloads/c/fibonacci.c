// Fibonacci numbers three ways: recursion, iteration and fast doubling.
long fib_rec(int n) {
    if (n < 2) {
        return n;
    }
    return fib_rec(n - 1) + fib_rec(n - 2);
}

long fib_iter(int n) {
    long a = 0;
    long b = 1;
    for (int i = 0; i < n; i = i + 1) {
        long t = a + b;
        a = b;
        b = t;
    }
    return a;
}

// F(2k) = F(k) * (2 * F(k + 1) - F(k)), F(2k + 1) = F(k) * F(k) + F(k + 1) * F(k + 1)
long next_fib = 0; // F(n + 1), set by fib_doubling

long fib_doubling(int n) {
    if (n == 0) {
        next_fib = 1;
        return 0;
    }
    long a = fib_doubling(n / 2);
    long b = next_fib;
    long even = a * (2 * b - a);
    long odd = a * a + b * b;
    if (n % 2 == 0) {
        next_fib = odd;
        return even;
    }
    next_fib = even + odd;
    return odd;
}

int main(void) {
    for (int n = 0; n <= 30; n = n + 1) {
        long x = fib_rec(n);
        long y = fib_iter(n);
        long z = fib_doubling(n);
        if (x != y || y != z) {
            printf("mismatch at %d: %ld %ld %ld\n", n, x, y, z);
            return 1;
        }
    }
    printf("F(90) = %ld\n", fib_iter(90));
    return 0;
}