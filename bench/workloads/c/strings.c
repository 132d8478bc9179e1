// Small string helpers: length, reverse in place, and a word counter.
int str_len(char *s) {
    int n = 0;
    while (s[n] != '\0') {
        n = n + 1;
    }
    return n;
}

void reverse(char *s) {
    int i = 0;
    int j = str_len(s) - 1;
    while (i < j) {
        swap_chars(s, i, j); // exchanges s[i] and s[j]
        i = i + 1;
        j = j - 1;
    }
}

int is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n';
}

int count_words(char *s) {
    int words = 0;
    int inside = 0;
    for (int i = 0; s[i] != '\0'; i = i + 1) {
        if (is_space(s[i])) {
            inside = 0;
        } else if (!inside) {
            inside = 1;
            words = words + 1;
        }
    }
    return words;
}

int main(void) {
    char *text = strdup("the quick brown fox\tjumps over\nthe lazy dog");
    printf("\"%s\" has %d words\n", text, count_words(text));
    reverse(text);
    printf("reversed: %s\n", text);
    free(text);
    return 0;
}