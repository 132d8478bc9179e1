// Greatest common divisor and least common multiple (Euclid).
int gcd(int a, int b) {
    while (b != 0) {
        int t = b;
        b = a % b;
        a = t;
    }
    return a;
}

int lcm(int a, int b) {
    if (a == 0 || b == 0) {
        return 0;
    }
    return a / gcd(a, b) * b;
}

int main(void) {
    long total = 0;
    for (int i = 1; i <= 100; i = i + 1) {
        total = total + lcm(i, 18); // keep a running sum
    }
    printf("sum of lcm(i, 18) for i in 1..100: %ld\n", total);
    int check = gcd(84, 36) - gcd(30, 12);
    if (check == 0) {
        printf("equal\n");
    } else if (check > 0) {
        printf("first is larger by %d\n", check);
    } else {
        printf("second is larger by %d\n", -check);
    }
    return 0;
}