package dev.kwire.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;

/**
 * Runs kwire's cases through Apache Kafka's own generated classes and JSON converters.
 *
 * <p>One case per input line, tab-separated: schema name, version, our bytes (base64), our JSON.
 * One answer per case: {@code ok}, then Kafka's re-encoding of our bytes (base64), Kafka's JSON
 * of our bytes, and Kafka's encoding of the instance its converter reads from our JSON (base64);
 * or {@code error}, the stage that failed and Kafka's message. The comparisons are made by the
 * Rust driver, which names the field that differs.
 *
 * <p>The classes are found by name on the class path: the message class of schema {@code N} is
 * {@code NData} (requests, responses, headers, data) or {@code N} (records), whichever has a
 * generated {@code JsonConverter} beside it.
 */
public final class Oracle {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    /** A schema's generated class and its converter's static read and write. */
    private static final class Classes {
        final Class<?> data;
        final Method read;
        final Method write;
        final boolean writeTakesRecordsFlag;

        Classes(Class<?> data, Method read, Method write, boolean writeTakesRecordsFlag) {
            this.data = data;
            this.read = read;
            this.write = write;
            this.writeTakesRecordsFlag = writeTakesRecordsFlag;
        }
    }

    /** A failure at one stage of a case. */
    private static final class StageException extends Exception {
        final String stage;

        StageException(String stage, Throwable cause) {
            super(describe(cause), cause);
            this.stage = stage;
        }
    }

    private final Map<String, String> convertersBySimpleName = new HashMap<>();
    private final Map<String, Classes> classes = new HashMap<>();

    public static void main(String[] args) throws IOException {
        Oracle oracle = new Oracle();
        oracle.indexClassPath();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8));
        out.write("ready\t" + oracle.convertersBySimpleName.size() + "\n");
        out.flush();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) {
                continue;
            }
            out.write(oracle.answer(line));
            out.write('\n');
            out.flush();
        }
    }

    /** Every generated JSON converter on the class path, by the simple name of its class. */
    private void indexClassPath() throws IOException {
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (!entry.endsWith(".jar")) {
                continue;
            }
            try (JarFile jar = new JarFile(entry)) {
                Enumeration<JarEntry> entries = jar.entries();
                while (entries.hasMoreElements()) {
                    String name = entries.nextElement().getName();
                    if (!name.endsWith("JsonConverter.class") || name.contains("$")) {
                        continue;
                    }
                    String className = name.substring(0, name.length() - ".class".length()).replace('/', '.');
                    String simple = className.substring(className.lastIndexOf('.') + 1);
                    String previous = convertersBySimpleName.putIfAbsent(simple, className);
                    if (previous != null && !previous.equals(className)) {
                        // Two classes for one schema name: refuse to guess which one is meant.
                        convertersBySimpleName.put(simple, "ambiguous: " + previous + " and " + className);
                    }
                }
            }
        }
    }

    private Classes classesFor(String schema) throws StageException {
        Classes found = classes.get(schema);
        if (found != null) {
            return found;
        }
        try {
            String converter = null;
            for (String candidate : new String[] {schema + "Data", schema}) {
                converter = convertersBySimpleName.get(candidate + "JsonConverter");
                if (converter != null) {
                    break;
                }
            }
            if (converter == null) {
                throw new ClassNotFoundException("no generated class for schema " + schema + " on the class path");
            }
            if (converter.startsWith("ambiguous: ")) {
                throw new ClassNotFoundException(converter);
            }
            Class<?> converterClass = Class.forName(converter);
            Class<?> data = Class.forName(converter.substring(0, converter.length() - "JsonConverter".length()));
            Method read = converterClass.getMethod("read", JsonNode.class, short.class);
            Method write;
            boolean flag;
            try {
                write = converterClass.getMethod("write", data, short.class, boolean.class);
                flag = true;
            } catch (NoSuchMethodException e) {
                write = converterClass.getMethod("write", data, short.class);
                flag = false;
            }
            found = new Classes(data, read, write, flag);
            classes.put(schema, found);
            return found;
        } catch (ReflectiveOperationException e) {
            throw new StageException("class", e);
        }
    }

    private String answer(String line) {
        String[] parts = line.split("\t", 4);
        if (parts.length != 4) {
            return "error\tinput\texpected 4 tab-separated fields, got " + parts.length;
        }
        try {
            String schema = parts[0];
            short version = Short.parseShort(parts[1]);
            byte[] ours = Base64.getDecoder().decode(parts[2]);
            Classes c = classesFor(schema);

            Message decoded = decode(c, ours, version);
            byte[] reencoded = encode(decoded, version, "encode");
            String json;
            try {
                Object node = c.writeTakesRecordsFlag
                        ? c.write.invoke(null, decoded, version, true)
                        : c.write.invoke(null, decoded, version);
                json = MAPPER.writeValueAsString(node);
            } catch (ReflectiveOperationException | IOException e) {
                throw new StageException("json-write", e);
            }
            Message fromJson;
            try {
                fromJson = (Message) c.read.invoke(null, MAPPER.readTree(parts[3]), version);
            } catch (ReflectiveOperationException | IOException e) {
                throw new StageException("json-read", e);
            }
            byte[] jsonBytes = encode(fromJson, version, "encode-from-json");
            Base64.Encoder b64 = Base64.getEncoder();
            return "ok\t" + b64.encodeToString(reencoded) + "\t" + json + "\t" + b64.encodeToString(jsonBytes);
        } catch (StageException e) {
            return "error\t" + e.stage + "\t" + e.getMessage();
        } catch (RuntimeException e) {
            return "error\tinput\t" + describe(e);
        }
    }

    private static Message decode(Classes c, byte[] bytes, short version) throws StageException {
        try {
            Message message = (Message) c.data.getConstructor().newInstance();
            ByteBuffer buffer = ByteBuffer.wrap(bytes);
            message.read(new ByteBufferAccessor(buffer), version);
            if (buffer.hasRemaining()) {
                throw new IllegalStateException(
                        "read " + buffer.position() + " of " + bytes.length + " bytes; " + buffer.remaining() + " left");
            }
            return message;
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new StageException("decode", e);
        }
    }

    private static byte[] encode(Message message, short version, String stage) throws StageException {
        try {
            ObjectSerializationCache cache = new ObjectSerializationCache();
            int size = message.size(cache, version);
            ByteBuffer buffer = ByteBuffer.allocate(size);
            message.write(new ByteBufferAccessor(buffer), cache, version);
            if (buffer.hasRemaining()) {
                throw new IllegalStateException("size() said " + size + " bytes, write filled " + buffer.position());
            }
            return buffer.array();
        } catch (RuntimeException e) {
            throw new StageException(stage, e);
        }
    }

    /** One line: the exception's class and message, and those of its causes. */
    private static String describe(Throwable e) {
        StringBuilder text = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof InvocationTargetException) {
                continue;
            }
            if (text.length() > 0) {
                text.append(" <- ");
            }
            text.append(t.getClass().getSimpleName()).append(": ").append(t.getMessage());
        }
        return text.toString().replace('\n', ' ').replace('\t', ' ');
    }
}
