import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Generates gatun's FFM bindings from the entry headers in native-headers/.
 *
 * <p>The C compiler is the only source of truth: prototypes come from {@code gcc -aux-info},
 * and every constant value, type class, size and field offset is printed by a probe program
 * compiled against the same headers. Nothing here knows a netlink constant. Each
 * {@code NAME.args} file (jextract's @argfile format) together with {@code NAME.h} produces one
 * header class; each {@code --include-struct} produces one struct class.
 *
 * <p>Usage: {@code java GenerateBindings.java HEADERS_DIR OUTPUT_SOURCE_ROOT}
 */
public final class GenerateBindings {

    static String moduleInfo(String pkg) {
        return "/**\n"
                + " * The FFM bindings generated from native-headers/ (bindings/generate): for gatun's core alone.\n"
                + " * The bench's C-floor comparisons read them from the class path, where this is not in force.\n"
                + " */\n"
                + "module dev.gatun.bindings {\n"
                + "    exports " + pkg + " to dev.gatun.core;\n"
                + "}\n";
    }

    public static void main(String[] args) throws Exception {
        try {
            generate(args);
        } catch (GenerationError e) {
            System.err.println("bindings/generate: " + e.getMessage());
            System.exit(1);
        }
    }

    static void generate(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: GenerateBindings HEADERS_DIR OUTPUT_SOURCE_ROOT");
            System.exit(2);
        }
        Path headers = Path.of(args[0]).toAbsolutePath().normalize();
        Path outRoot = Path.of(args[1]).toAbsolutePath().normalize();
        Set<String> errnoFunctions = readList(headers.resolve("errno-functions.txt"));
        List<Path> specs;
        try (Stream<Path> s = Files.list(headers)) {
            specs = s.filter(p -> p.toString().endsWith(".args")).sorted().toList();
        }
        if (specs.isEmpty()) {
            fail("no .args files in " + headers);
        }
        Path work = Files.createTempDirectory("gatun-bindings");
        try {
            String pkg = null;
            Map<String, String> files = new LinkedHashMap<>();
            Set<String> structsSeen = new TreeSet<>();
            Set<String> boundFunctions = new TreeSet<>();
            for (Path spec : specs) {
                Spec s = Spec.parse(spec);
                if (pkg != null && !pkg.equals(s.pkg)) {
                    fail(spec + ": every header must use the same --target-package (" + pkg + ")");
                }
                pkg = s.pkg;
                Header h = new Header(headers, s, errnoFunctions, work);
                h.analyse();
                files.put(s.headerClass, h.headerClassSource());
                boundFunctions.addAll(s.functions);
                for (StructInfo st : h.structs) {
                    if (!structsSeen.add(st.name)) {
                        fail("struct " + st.name + " is included by more than one header");
                    }
                    files.put(st.name, h.structSource(st));
                }
            }
            Set<String> unbound = new TreeSet<>(errnoFunctions);
            unbound.removeAll(boundFunctions);
            if (!unbound.isEmpty()) {
                fail("errno-functions.txt names functions no header includes: " + unbound);
            }
            files.put("CallState", callStateSource(pkg));
            Path pkgDir = outRoot.resolve(pkg.replace('.', '/'));
            Files.createDirectories(pkgDir);
            try (Stream<Path> old = Files.list(pkgDir)) {
                for (Path p : old.filter(p -> p.toString().endsWith(".java")).toList()) {
                    Files.delete(p);
                }
            }
            for (var e : files.entrySet()) {
                Files.writeString(pkgDir.resolve(e.getKey() + ".java"), e.getValue(), StandardCharsets.UTF_8);
            }
            // The bindings are a module that lets core alone read them (the bench reads them from the class path).
            Files.writeString(outRoot.resolve("module-info.java"), moduleInfo(pkg), StandardCharsets.UTF_8);
            System.out.println("generated " + files.size() + " classes in " + pkgDir);
        } finally {
            deleteTree(work);
        }
    }

    // ---------------------------------------------------------------- the @argfile

    /** One entry header's allow-list, in jextract's @argfile format. */
    record Spec(Path file, String base, String pkg, String headerClass, String library,
                List<String> functions, List<String> constants, List<String> structs) {

        static Spec parse(Path file) throws IOException {
            String base = file.getFileName().toString().replaceFirst("\\.args$", "");
            String pkg = null;
            String cls = null;
            String lib = null;
            List<String> functions = new ArrayList<>();
            List<String> constants = new ArrayList<>();
            List<String> structs = new ArrayList<>();
            int lineNo = 0;
            for (String raw : Files.readAllLines(file)) {
                lineNo++;
                String line = raw.strip();
                if (line.isEmpty() || line.startsWith("#")) {
                    continue;
                }
                String[] parts = line.split("\\s+");
                if (parts.length != 2) {
                    fail(file + ":" + lineNo + ": expected 'OPTION VALUE', got '" + line + "'");
                }
                switch (parts[0]) {
                    case "-t", "--target-package" -> pkg = parts[1];
                    case "--header-class-name" -> cls = parts[1];
                    case "-l", "--library" -> lib = parts[1];
                    case "--include-function" -> functions.add(parts[1]);
                    case "--include-constant" -> constants.add(parts[1]);
                    case "--include-struct" -> structs.add(parts[1]);
                    default -> fail(file + ":" + lineNo + ": unsupported option " + parts[0]);
                }
            }
            if (pkg == null || cls == null) {
                fail(file + ": --target-package and --header-class-name are required");
            }
            if (lib != null && !lib.startsWith(":")) {
                fail(file + ": --library must name the runtime file with ':' (for example :libmnl.so.0), got " + lib);
            }
            checkUnique(file, "function", functions);
            checkUnique(file, "constant", constants);
            checkUnique(file, "struct", structs);
            return new Spec(file, base, pkg, cls, lib == null ? null : lib.substring(1),
                    functions, constants, structs);
        }

        private static void checkUnique(Path file, String what, List<String> names) {
            Set<String> seen = new LinkedHashSet<>();
            for (String n : names) {
                if (!seen.add(n)) {
                    fail(file + ": " + what + " " + n + " is listed twice");
                }
            }
        }
    }

    // ---------------------------------------------------------------- what gcc tells us

    /** A C prototype as gcc -aux-info prints it: types only, no parameter names. */
    record Prototype(String name, String returnType, List<String> params, boolean variadic, String declaration) {}

    /** A struct field as declared in the preprocessed header; arrayLength is 0 for scalars. */
    record FieldDecl(String name, String type, long arrayLength) {}

    /** A C type as the probe classified it. */
    record CType(int typeClass, long size) {
        String layout() {
            return switch (typeClass) {
                case 1, 2, 3 -> switch ((int) size) {
                    case 1 -> "JAVA_BYTE";
                    case 2 -> "JAVA_SHORT";
                    case 4 -> "JAVA_INT";
                    case 8 -> "JAVA_LONG";
                    default -> throw new IllegalStateException("integer of size " + size);
                };
                case 4 -> size == 1 ? "JAVA_BOOLEAN" : new CType(1, size).layout();
                case 5 -> "ADDRESS";
                case 8 -> size == 4 ? "JAVA_FLOAT" : size == 8 ? "JAVA_DOUBLE" : unsupported();
                default -> unsupported();
            };
        }

        String carrier() {
            return switch (layout()) {
                case "JAVA_BYTE" -> "byte";
                case "JAVA_SHORT" -> "short";
                case "JAVA_INT" -> "int";
                case "JAVA_LONG" -> "long";
                case "JAVA_BOOLEAN" -> "boolean";
                case "JAVA_FLOAT" -> "float";
                case "JAVA_DOUBLE" -> "double";
                default -> "MemorySegment";
            };
        }

        private String unsupported() {
            throw new IllegalStateException("type class " + typeClass + " of size " + size + " has no FFM layout here");
        }
    }

    record ConstantValue(String name, long size, long value) {}

    record FieldInfo(String name, String cType, long offset, long size, CType type, long arrayLength,
                     String nestedStruct) {}

    record StructInfo(String name, long size, long align, List<FieldInfo> fields) {}

    /** Everything gcc says about one entry header and its allow-list. */
    static final class Header {
        final Path headersDir;
        final Spec spec;
        final Set<String> errnoFunctions;
        final Path work;
        final Map<String, Prototype> prototypes = new LinkedHashMap<>();
        final Map<String, List<FieldDecl>> structDecls = new LinkedHashMap<>();
        final Map<String, CType> types = new HashMap<>();
        final List<ConstantValue> constants = new ArrayList<>();
        final List<StructInfo> structs = new ArrayList<>();

        Header(Path headersDir, Spec spec, Set<String> errnoFunctions, Path work) {
            this.headersDir = headersDir;
            this.spec = spec;
            this.errnoFunctions = errnoFunctions;
            this.work = work;
        }

        void analyse() throws IOException, InterruptedException {
            Path entry = work.resolve(spec.base + "_entry.c");
            Files.writeString(entry, "#include \"" + spec.base + ".h\"\n");
            readPrototypes(entry);
            readStructDeclarations(entry);
            runProbe();
        }

        private void readPrototypes(Path entry) throws IOException, InterruptedException {
            Path aux = work.resolve(spec.base + ".aux");
            gcc("-I", headersDir.toString(), "-aux-info", aux.toString(), "-c", entry.toString(),
                    "-o", work.resolve(spec.base + "_entry.o").toString());
            Map<String, Prototype> all = new HashMap<>();
            Pattern line = Pattern.compile("^/\\* .*? \\*/ (.*?);$");
            for (String l : Files.readAllLines(aux)) {
                Matcher m = line.matcher(l);
                if (m.matches()) {
                    Prototype p = parsePrototype(m.group(1));
                    if (p != null) {
                        all.putIfAbsent(p.name, p);
                    }
                }
            }
            for (String f : spec.functions) {
                Prototype p = all.get(f);
                if (p == null) {
                    fail(spec.file + ": function " + f + " is not declared by " + spec.base + ".h");
                }
                prototypes.put(f, p);
            }
        }

        /** Parses "extern int foo (const char *, int, ...)"; returns null for what is not a function prototype. */
        static Prototype parsePrototype(String decl) {
            String d = decl.replaceFirst("^(extern|static)\\s+", "").replaceFirst("^__inline__\\s+", "");
            int open = d.indexOf(" (");
            if (open < 0 || !d.endsWith(")")) {
                return null;
            }
            String head = d.substring(0, open).strip();
            Matcher m = Pattern.compile("^(.*?)([A-Za-z_][A-Za-z_0-9]*)$").matcher(head);
            if (!m.matches()) {
                return null;
            }
            String ret = m.group(1).strip();
            String name = m.group(2);
            List<String> params = splitTopLevel(d.substring(open + 2, d.length() - 1));
            boolean variadic = !params.isEmpty() && params.getLast().equals("...");
            if (variadic) {
                params = params.subList(0, params.size() - 1);
            }
            if (params.size() == 1 && params.getFirst().equals("void")) {
                params = List.of();
            }
            return new Prototype(name, ret, List.copyOf(params), variadic, decl);
        }

        static List<String> splitTopLevel(String s) {
            List<String> out = new ArrayList<>();
            int depth = 0;
            int start = 0;
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                if (c == '(' || c == '[') depth++;
                else if (c == ')' || c == ']') depth--;
                else if (c == ',' && depth == 0) {
                    out.add(s.substring(start, i).strip());
                    start = i + 1;
                }
            }
            String last = s.substring(start).strip();
            if (!last.isEmpty()) {
                out.add(last);
            }
            return out;
        }

        private void readStructDeclarations(Path entry) throws IOException, InterruptedException {
            if (spec.structs.isEmpty()) {
                return;
            }
            String pre = gcc("-I", headersDir.toString(), "-E", "-P", entry.toString());
            for (String s : spec.structs) {
                Matcher m = Pattern.compile("\\bstruct\\s+" + Pattern.quote(s) + "\\s*\\{").matcher(pre);
                if (!m.find()) {
                    fail(spec.file + ": struct " + s + " is not defined by " + spec.base + ".h");
                }
                int depth = 1;
                int i = m.end();
                int bodyStart = i;
                while (depth > 0) {
                    char c = pre.charAt(i++);
                    if (c == '{') depth++;
                    if (c == '}') depth--;
                }
                String body = pre.substring(bodyStart, i - 1);
                if (body.contains("{")) {
                    fail("struct " + s + " has a nested definition, which the generator does not support");
                }
                List<FieldDecl> fields = new ArrayList<>();
                for (String decl : body.split(";")) {
                    String dd = decl.replaceAll("\\s+", " ").strip();
                    if (dd.isEmpty()) {
                        continue;
                    }
                    if (dd.contains(":") || dd.contains(",")) {
                        fail("struct " + s + ": bit-fields and multiple declarators are not supported: " + dd);
                    }
                    Matcher f = Pattern.compile("^(.*?)\\s*\\b([A-Za-z_][A-Za-z_0-9]*)\\s*(?:\\[\\s*(\\d*)\\s*\\])?$").matcher(dd);
                    if (!f.matches()) {
                        fail("struct " + s + ": cannot read field declaration '" + dd + "'");
                    }
                    String len = f.group(3);
                    long arrayLength = len == null ? 0 : len.isEmpty() ? -1 : Long.parseLong(len);
                    fields.add(new FieldDecl(f.group(2), f.group(1).strip(), arrayLength));
                }
                structDecls.put(s, fields);
            }
        }

        /** Compiles and runs a program that prints what Java needs to know about every listed name. */
        private void runProbe() throws IOException, InterruptedException {
            StringBuilder c = new StringBuilder();
            c.append("#include \"").append(spec.base).append(".h\"\n");
            c.append("#include <stdio.h>\n#include <stddef.h>\n\n");
            // A constant that is not a compile-time integer fails here, with its name in gcc's message.
            for (String k : spec.constants) {
                c.append("static const long long gatun_const_").append(k).append(" = (long long)(").append(k).append(");\n");
            }
            c.append("\nint main(void) {\n");
            List<String> typeNames = new ArrayList<>(new TreeSet<>(allTypes()));
            for (int i = 0; i < typeNames.size(); i++) {
                String t = typeNames.get(i);
                c.append("  printf(\"type ").append(i).append(" %d %zu\\n\", __builtin_classify_type(*(__typeof__(")
                        .append(t).append(") *)0), sizeof(").append(t).append("));\n");
            }
            for (String k : spec.constants) {
                c.append("  printf(\"const ").append(k).append(" %d %zu %lld\\n\", __builtin_classify_type(").append(k)
                        .append("), sizeof(").append(k).append("), gatun_const_").append(k).append(");\n");
            }
            for (var e : structDecls.entrySet()) {
                String s = e.getKey();
                c.append("  printf(\"struct ").append(s).append(" %zu %zu\\n\", sizeof(struct ").append(s)
                        .append("), _Alignof(struct ").append(s).append("));\n");
                for (FieldDecl f : e.getValue()) {
                    String member = "((struct " + s + " *)0)->" + f.name;
                    String elem = f.arrayLength != 0 ? member + "[0]" : member;
                    c.append("  printf(\"field ").append(s).append(' ').append(f.name)
                            .append(" %zu %zu %d %zu\\n\", offsetof(struct ").append(s).append(", ").append(f.name)
                            .append("), sizeof(").append(member).append("), __builtin_classify_type(").append(elem)
                            .append("), sizeof(").append(elem).append("));\n");
                }
            }
            c.append("  return 0;\n}\n");
            Path probeC = work.resolve(spec.base + "_probe.c");
            Path probe = work.resolve(spec.base + "_probe");
            Files.writeString(probeC, c.toString());
            gcc("-I", headersDir.toString(), "-w", "-o", probe.toString(), probeC.toString());
            String out = run(List.of(probe.toString()));

            Map<String, StructInfo> structByName = new LinkedHashMap<>();
            Map<String, List<FieldInfo>> fieldsByStruct = new HashMap<>();
            for (String l : out.split("\n")) {
                String[] p = l.split(" ");
                switch (p[0]) {
                    case "type" -> types.put(typeNames.get(Integer.parseInt(p[1])),
                            new CType(Integer.parseInt(p[2]), Long.parseLong(p[3])));
                    case "const" -> {
                        int cls = Integer.parseInt(p[2]);
                        if (cls < 1 || cls > 4) {
                            fail(spec.file + ": constant " + p[1] + " is not an integer (type class " + cls + ")");
                        }
                        constants.add(new ConstantValue(p[1], Long.parseLong(p[3]), Long.parseLong(p[4])));
                    }
                    case "struct" -> {
                        fieldsByStruct.put(p[1], new ArrayList<>());
                        structByName.put(p[1], new StructInfo(p[1], Long.parseLong(p[2]), Long.parseLong(p[3]),
                                fieldsByStruct.get(p[1])));
                    }
                    case "field" -> {
                        String s = p[1];
                        FieldDecl d = structDecls.get(s).stream().filter(f -> f.name.equals(p[2])).findFirst().orElseThrow();
                        CType elemType = new CType(Integer.parseInt(p[5]), Long.parseLong(p[6]));
                        String nested = null;
                        if (elemType.typeClass == 12) {
                            nested = d.type.replaceFirst("^(const\\s+)?struct\\s+", "").strip();
                        }
                        fieldsByStruct.get(s).add(new FieldInfo(d.name, d.type, Long.parseLong(p[3]),
                                Long.parseLong(p[4]), elemType, d.arrayLength, nested));
                    }
                    default -> fail("unexpected probe output: " + l);
                }
            }
            structs.addAll(structByName.values());
        }

        private Set<String> allTypes() {
            Set<String> t = new LinkedHashSet<>();
            for (Prototype p : prototypes.values()) {
                if (!p.returnType.equals("void")) {
                    t.add(p.returnType);
                }
                t.addAll(p.params);
            }
            return t;
        }

        // ------------------------------------------------------------ Java output

        String headerClassSource() {
            StringBuilder j = new StringBuilder();
            j.append(generatedNotice(spec.base + ".h", spec.base + ".args"));
            j.append("package ").append(spec.pkg).append(";\n\n");
            boolean hasFunctions = !prototypes.isEmpty();
            if (hasFunctions) {
                j.append("import java.lang.foreign.Arena;\n");
                j.append("import java.lang.foreign.FunctionDescriptor;\n");
                j.append("import java.lang.foreign.Linker;\n");
                j.append("import java.lang.foreign.MemorySegment;\n");
                j.append("import java.lang.foreign.SymbolLookup;\n");
                j.append("import java.lang.invoke.MethodHandle;\n\n");
                j.append("import static java.lang.foreign.ValueLayout.*;\n\n");
            }
            j.append("/** Bindings for native-headers/").append(spec.base).append(".h: ")
                    .append(prototypes.size()).append(" functions, ").append(constants.size()).append(" constants. */\n");
            j.append("public final class ").append(spec.headerClass).append(" {\n\n");
            j.append("    private ").append(spec.headerClass).append("() {}\n\n");
            if (hasFunctions) {
                if (spec.library != null) {
                    j.append("    /** The shared library these functions live in, as the dynamic loader names it. */\n");
                    j.append("    public static final String LIBRARY = \"").append(spec.library).append("\";\n\n");
                    j.append("    /** Opened on first use, so a missing library fails only the calls into it. */\n");
                    j.append("    private static final class Library {\n");
                    j.append("        static final SymbolLookup LOOKUP = SymbolLookup.libraryLookup(LIBRARY, Arena.global());\n");
                    j.append("    }\n\n");
                    j.append("    static MemorySegment findOrThrow(String symbol) {\n");
                    j.append("        return Library.LOOKUP.find(symbol)\n");
                    j.append("                .orElseThrow(() -> new UnsatisfiedLinkError(\"unresolved symbol: \" + symbol + \" in \" + LIBRARY));\n");
                    j.append("    }\n\n");
                } else {
                    j.append("    static MemorySegment findOrThrow(String symbol) {\n");
                    j.append("        return Linker.nativeLinker().defaultLookup().find(symbol)\n");
                    j.append("                .orElseThrow(() -> new UnsatisfiedLinkError(\"unresolved symbol: \" + symbol));\n");
                    j.append("    }\n\n");
                }
            }
            for (Prototype p : prototypes.values()) {
                appendFunction(j, p);
            }
            for (ConstantValue k : constants) {
                boolean isLong = k.size > 4;
                String type = isLong ? "long" : "int";
                String literal = isLong ? k.value + "L"
                        : (k.value >= Integer.MIN_VALUE && k.value <= Integer.MAX_VALUE) ? Long.toString(k.value)
                        : "(int) " + k.value + "L";
                j.append("    public static final ").append(type).append(' ').append(k.name).append(" = ")
                        .append(literal).append(";\n");
            }
            j.append("}\n");
            return j.toString();
        }

        private void appendFunction(StringBuilder j, Prototype p) {
            boolean captures = errnoFunctions.contains(p.name);
            CType ret = p.returnType.equals("void") ? null : types.get(p.returnType);
            List<CType> params = p.params.stream().map(types::get).toList();
            String layouts = params.stream().map(CType::layout).reduce((a, b) -> a + ", " + b).orElse("");
            String descriptor = ret == null
                    ? "FunctionDescriptor.ofVoid(" + layouts + ")"
                    : "FunctionDescriptor.of(" + ret.layout() + (layouts.isEmpty() ? "" : ", " + layouts) + ")";
            String holder = p.name + "$";
            j.append("    private static final class ").append(holder).append(" {\n");
            j.append("        static final FunctionDescriptor DESC = ").append(descriptor).append(";\n");
            j.append("        static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(findOrThrow(\"")
                    .append(p.name).append("\"), DESC").append(captures ? ", CallState.CAPTURE_ERRNO" : "")
                    .append(");\n");
            j.append("    }\n\n");
            j.append("    public static FunctionDescriptor ").append(p.name).append("$descriptor() {\n");
            j.append("        return ").append(holder).append(".DESC;\n    }\n\n");
            j.append("    public static MethodHandle ").append(p.name).append("$handle() {\n");
            j.append("        return ").append(holder).append(".HANDLE;\n    }\n\n");

            String cDecl = p.declaration.replaceFirst("^extern\\s+", "");
            j.append("    /**\n     * {@snippet lang=c : ").append(cDecl).append(" }\n");
            if (p.variadic) {
                j.append("     * Variadic in C: bound with its fixed parameters only.\n");
            }
            if (captures) {
                j.append("     * @param callState the caller's own {@link CallState} segment; errno is written there\n");
            }
            j.append("     */\n");
            List<String> formals = new ArrayList<>();
            List<String> actuals = new ArrayList<>();
            if (captures) {
                formals.add("MemorySegment callState");
                actuals.add("callState");
            }
            for (int i = 0; i < params.size(); i++) {
                formals.add(params.get(i).carrier() + " x" + i);
                actuals.add("x" + i);
            }
            String retCarrier = ret == null ? "void" : ret.carrier();
            j.append("    public static ").append(retCarrier).append(' ').append(p.name).append('(')
                    .append(String.join(", ", formals)).append(") {\n");
            j.append("        try {\n");
            j.append("            ").append(ret == null ? "" : "return (" + retCarrier + ") ").append(holder)
                    .append(".HANDLE.invokeExact(").append(String.join(", ", actuals)).append(");\n");
            j.append("        } catch (Error | RuntimeException e) {\n");
            j.append("            throw e;\n");
            j.append("        } catch (Throwable t) {\n");
            j.append("            throw new AssertionError(\"unexpected checked exception from ").append(p.name)
                    .append("\", t);\n");
            j.append("        }\n    }\n\n");
        }

        String structSource(StructInfo s) {
            Set<String> ownStructs = new LinkedHashSet<>(spec.structs);
            StringBuilder j = new StringBuilder();
            j.append(generatedNotice(spec.base + ".h", spec.base + ".args"));
            j.append("package ").append(spec.pkg).append(";\n\n");
            j.append("import java.lang.foreign.GroupLayout;\n");
            j.append("import java.lang.foreign.MemoryLayout;\n");
            j.append("import java.lang.foreign.MemorySegment;\n");
            j.append("import java.lang.foreign.SegmentAllocator;\n\n");
            j.append("import static java.lang.foreign.ValueLayout.*;\n\n");
            j.append("/** {@snippet lang=c : struct ").append(s.name).append(" } (").append(s.size)
                    .append(" bytes) */\n");
            j.append("public final class ").append(s.name).append(" {\n\n");
            j.append("    private ").append(s.name).append("() {}\n\n");
            j.append("    private static final GroupLayout LAYOUT = MemoryLayout.structLayout(\n");
            List<String> members = new ArrayList<>();
            long at = 0;
            for (FieldInfo f : s.fields) {
                if (f.offset > at) {
                    members.add("MemoryLayout.paddingLayout(" + (f.offset - at) + ")");
                }
                members.add(fieldLayoutExpr(f, ownStructs) + ".withName(\"" + f.name + "\")");
                at = f.offset + f.size;
            }
            if (s.size > at) {
                members.add("MemoryLayout.paddingLayout(" + (s.size - at) + ")");
            }
            j.append("            ").append(String.join(",\n            ", members)).append(")\n");
            j.append("            .withName(\"").append(s.name).append("\");\n\n");
            j.append("    public static GroupLayout layout() {\n        return LAYOUT;\n    }\n\n");
            j.append("    public static long sizeof() {\n        return ").append(s.size).append("L;\n    }\n\n");
            j.append("    public static MemorySegment allocate(SegmentAllocator allocator) {\n");
            j.append("        return allocator.allocate(LAYOUT);\n    }\n");
            for (FieldInfo f : s.fields) {
                j.append("\n    /** {@snippet lang=c : ").append(f.cType).append(' ').append(f.name)
                        .append(f.arrayLength != 0 ? "[" + (f.arrayLength < 0 ? "" : f.arrayLength) + "]" : "")
                        .append(" } */\n");
                j.append("    public static final long ").append(f.name).append("$OFFSET = ").append(f.offset).append("L;\n");
                if (f.arrayLength == 0 && f.nestedStruct == null) {
                    String carrier = f.type.carrier();
                    String layout = f.type.layout() + aligned(f);
                    j.append("\n    public static ").append(carrier).append(' ').append(f.name)
                            .append("(MemorySegment struct) {\n");
                    j.append("        return struct.get(").append(layout).append(", ").append(f.name)
                            .append("$OFFSET);\n    }\n\n");
                    j.append("    public static void ").append(f.name).append("(MemorySegment struct, ")
                            .append(carrier).append(" value) {\n");
                    j.append("        struct.set(").append(layout).append(", ").append(f.name)
                            .append("$OFFSET, value);\n    }\n");
                } else {
                    j.append("\n    public static MemorySegment ").append(f.name).append("(MemorySegment struct) {\n");
                    j.append("        return struct.asSlice(").append(f.name).append("$OFFSET, ").append(f.size)
                            .append("L);\n    }\n");
                }
            }
            j.append("}\n");
            return j.toString();
        }

        private static String aligned(FieldInfo f) {
            long natural = f.type.size;
            return (natural > 1 && f.offset % natural != 0) ? ".withByteAlignment(1)" : "";
        }

        private static String fieldLayoutExpr(FieldInfo f, Set<String> ownStructs) {
            String elem;
            if (f.nestedStruct != null) {
                elem = ownStructs.contains(f.nestedStruct) ? f.nestedStruct + ".layout()"
                        : "MemoryLayout.sequenceLayout(" + f.type.size + ", JAVA_BYTE)";
            } else {
                elem = f.type.layout() + aligned(f);
            }
            if (f.arrayLength > 0) {
                return "MemoryLayout.sequenceLayout(" + f.arrayLength + ", " + elem + ")";
            }
            if (f.arrayLength < 0) {
                return "MemoryLayout.sequenceLayout(0, " + elem + ")";
            }
            return elem;
        }
    }

    static String callStateSource(String pkg) {
        return generatedNotice(null, null) + "package " + pkg + ";\n\n"
                + "import java.lang.foreign.Linker;\n"
                + "import java.lang.foreign.MemoryLayout;\n"
                + "import java.lang.foreign.MemorySegment;\n"
                + "import java.lang.foreign.SegmentAllocator;\n"
                + "import java.lang.foreign.StructLayout;\n"
                + "import java.lang.invoke.VarHandle;\n\n"
                + "/**\n"
                + " * errno captured per call. Each caller allocates its own state segment (in its own arena)\n"
                + " * and passes it to the binding, so no two calls ever share the place errno is written.\n"
                + " */\n"
                + "public final class CallState {\n\n"
                + "    private CallState() {}\n\n"
                + "    static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState(\"errno\");\n\n"
                + "    public static final StructLayout LAYOUT = Linker.Option.captureStateLayout();\n\n"
                + "    private static final VarHandle ERRNO =\n"
                + "            LAYOUT.varHandle(MemoryLayout.PathElement.groupElement(\"errno\"));\n\n"
                + "    public static MemorySegment allocate(SegmentAllocator allocator) {\n"
                + "        return allocator.allocate(LAYOUT);\n"
                + "    }\n\n"
                + "    public static int errno(MemorySegment callState) {\n"
                + "        return (int) ERRNO.get(callState, 0L);\n"
                + "    }\n"
                + "}\n";
    }

    static String generatedNotice(String header, String args) {
        String from = header == null ? "" : " from native-headers/" + header + " and native-headers/" + args;
        return "// Generated by bindings/generate" + from + ". Do not edit: change the allow-list and regenerate.\n";
    }

    // ---------------------------------------------------------------- processes and files

    static String gcc(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(System.getenv().getOrDefault("CC", "gcc"));
        cmd.addAll(List.of(args));
        return run(cmd);
    }

    static String run(List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(false).start();
        byte[] out = p.getInputStream().readAllBytes();
        byte[] err = p.getErrorStream().readAllBytes();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("timed out: " + String.join(" ", cmd));
        }
        if (p.exitValue() != 0) {
            fail("failed (exit " + p.exitValue() + "): " + String.join(" ", cmd) + "\n"
                    + new String(err, StandardCharsets.UTF_8));
        }
        return new String(out, StandardCharsets.UTF_8);
    }

    static Set<String> readList(Path file) throws IOException {
        Set<String> out = new LinkedHashSet<>();
        if (Files.exists(file)) {
            for (String l : Files.readAllLines(file)) {
                String s = l.strip();
                if (!s.isEmpty() && !s.startsWith("#")) {
                    out.add(s);
                }
            }
        }
        return out;
    }

    static void deleteTree(Path root) {
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void fail(String message) {
        throw new GenerationError(message);
    }

    static final class GenerationError extends RuntimeException {
        GenerationError(String message) {
            super(message, null, false, false);
        }
    }
}
