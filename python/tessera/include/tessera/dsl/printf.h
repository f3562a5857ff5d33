/* tessera/dsl/printf.h: printf as the Zhouyi NPU's runtime prints it, for S.printf. Included by
 * tessera/dsl.h, which then names it `printf` in kernels.
 *
 * The DSL's parser hands it normalised arguments: an int (32 bits) for %d %i %u %o %x %X %c (the
 * bits of a float for %x), a double holding a float32 value for %f %e %g, a pointer for %p;
 * length modifiers (hh, h, l) are accepted and ignored. It differs from C's printf where the NPU
 * does, and PySim's dsl.printf follows the same rules:
 *  - %o prints a leading 0 and %x/%X a leading 0x (0 prints "00" and "0x0"; the '#' flag adds
 *    nothing more);
 *  - %f/%F print their decimals (6, or the precision given) truncated toward zero, not rounded:
 *    the value printed with 6 more decimals, which are then dropped;
 *  - a width pads the whole field, prefix included ('-': on the right; '0': zeros after the sign
 *    or prefix).
 * One call is written under the lock of stdout and flushed, so that lines printed by different
 * TECs do not mix. */
#ifndef TESSERA_DSL_PRINTF_H_
#define TESSERA_DSL_PRINTF_H_

/* Writes `body` (whose first `lead` characters are a sign or prefix) padded to `width`. */
static void __tessera_printf_field(const char* body, size_t lead, int width, int left, int zero) {
  size_t len = strlen(body);
  size_t pad = width > 0 && (size_t)width > len ? (size_t)width - len : 0;
  if (left) {
    fputs(body, stdout);
    for (size_t i = 0; i < pad; ++i) putc(' ', stdout);
  } else if (zero) {
    fwrite(body, 1, lead, stdout);
    for (size_t i = 0; i < pad; ++i) putc('0', stdout);
    fputs(body + lead, stdout);
  } else {
    for (size_t i = 0; i < pad; ++i) putc(' ', stdout);
    fputs(body, stdout);
  }
}

static int __tessera_npu_printf(const char* fmt, ...) __attribute__((unused));
static int __tessera_npu_printf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  flockfile(stdout);
  for (const char* c = fmt; *c != '\0';) {
    if (*c != '%') {
      putc(*c++, stdout);
      continue;
    }
    ++c;
    if (*c == '%') {
      putc('%', stdout);
      ++c;
      continue;
    }
    int left = 0, zero = 0, plus = 0, space = 0, width = 0, precision = -1;
    for (;; ++c) {
      if (*c == '-') left = 1;
      else if (*c == '0') zero = 1;
      else if (*c == '+') plus = 1;
      else if (*c == ' ') space = 1;
      else if (*c != '#') break;
    }
    while (*c >= '0' && *c <= '9') width = width * 10 + (*c++ - '0');
    if (*c == '.') {
      precision = 0;
      for (++c; *c >= '0' && *c <= '9'; ++c) precision = precision * 10 + (*c - '0');
    }
    while (*c == 'h' || *c == 'l') ++c;
    char conv = *c;
    if (conv == '\0') break;
    ++c;
    char body[512];
    size_t lead = 0;
    switch (conv) {
      case 'd':
      case 'i': {
        int v = va_arg(ap, int);
        snprintf(body, sizeof body, plus ? "%+d" : space ? "% d" : "%d", v);
        lead = v < 0 || plus || space;
        break;
      }
      case 'u':
        snprintf(body, sizeof body, "%u", va_arg(ap, unsigned));
        break;
      case 'o':
        snprintf(body, sizeof body, "0%o", va_arg(ap, unsigned));
        lead = 1;
        break;
      case 'x':
      case 'X':
        snprintf(body, sizeof body, conv == 'x' ? "0x%x" : "0x%X", va_arg(ap, unsigned));
        lead = 2;
        break;
      case 'c':
        body[0] = (char)va_arg(ap, int);
        body[1] = '\0';
        zero = 0;
        break;
      case 'f':
      case 'F': {
        double v = va_arg(ap, double);
        int digits = precision < 0 ? 6 : precision;
        snprintf(body, sizeof body, plus ? "%+.*f" : space ? "% .*f" : "%.*f", digits + 6, v);
        size_t len = strlen(body);
        /* Finite values end in the 6 extra digits (and the point when no decimal is kept). */
        if (len > 6 && body[len - 1] >= '0' && body[len - 1] <= '9') {
          body[len - 6 - (digits == 0)] = '\0';
        }
        lead = body[0] == '-' || body[0] == '+' || body[0] == ' ';
        break;
      }
      case 'e':
      case 'E':
      case 'g':
      case 'G': {
        char spec[16];
        double v = va_arg(ap, double);
        snprintf(spec, sizeof spec, "%%%s%s.*%c", plus ? "+" : "", space ? " " : "", conv);
        snprintf(body, sizeof body, spec, precision < 0 ? 6 : precision, v);
        lead = body[0] == '-' || body[0] == '+' || body[0] == ' ';
        break;
      }
      case 'p':
        snprintf(body, sizeof body, "%p", va_arg(ap, void*));
        zero = 0;
        break;
      case 's': /* a literal string is part of the format; kept for hand-written calls */
        fputs(va_arg(ap, const char*), stdout);
        continue;
      default: /* not a conversion: printed as written */
        putc('%', stdout);
        putc(conv, stdout);
        continue;
    }
    __tessera_printf_field(body, lead, width, left, zero);
  }
  funlockfile(stdout);
  fflush(stdout);
  va_end(ap);
  return 0;
}

#endif /* TESSERA_DSL_PRINTF_H_ */
