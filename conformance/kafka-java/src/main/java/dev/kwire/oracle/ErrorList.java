package dev.kwire.oracle;

import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.protocol.Errors;

/**
 * Prints Kafka's error codes as its own {@link Errors} enum defines them, for kwire's error
 * table: one tab-separated line per code (code, name, whether its exception is retriable, the
 * exception's default message, empty for {@code NONE}), after a header line.
 */
public final class ErrorList {
    private ErrorList() {}

    public static void main(String[] args) {
        StringBuilder out = new StringBuilder("code\tname\tretriable\tmessage\n");
        for (Errors e : Errors.values()) {
            String message = e.exception() == null ? "" : e.exception().getMessage();
            out.append(e.code()).append('\t').append(e.name()).append('\t')
                .append(e.exception() instanceof RetriableException).append('\t').append(message).append('\n');
        }
        System.out.print(out);
    }
}
