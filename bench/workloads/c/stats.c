// Running mean and variance with Welford's method over a synthetic series.
double sample(int i) {
    int x = (i * 7919) % 1000;
    return x / 10.0;
}

double mean_of(int n) {
    double m = 0.0;
    for (int i = 1; i <= n; i = i + 1) {
        m = m + (sample(i) - m) / i;
    }
    return m;
}

double variance_of(int n) {
    double m = 0.0;
    double s = 0.0;
    int k = 0;
    while (k < n) {
        k = k + 1;
        double x = sample(k);
        double d = x - m;
        m = m + d / k;
        s = s + d * (x - m);
    }
    if (n > 1) {
        return s / (n - 1);
    }
    return 0.0;
}

int main(void) {
    char sep = '\t';
    int n = 10;
    // the values settle near 50 and 833
    while (n <= 100000) {
        printf("%d%c%f%c%f\n", n, sep, mean_of(n), sep, variance_of(n));
        n = n * 10;
    }
    return 0;
}