import java.io.IOException;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassFileVersion;
import java.lang.classfile.ClassHierarchyResolver;
import java.lang.classfile.ClassModel;
import java.lang.classfile.ClassTransform;
import java.lang.classfile.CodeTransform;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;

/**
 * Build step for the CLI jar: rewrites classes compiled for Java 5 or older (picocli's) as
 * Java 8 class files, the same code with stack maps computed. The JDK's AOT cache skips such
 * old classes ("Old class has been linked"), so without this every start of ./gatun loads and
 * verifies picocli from the jar again: about 40 ms of a one-shot command here.
 *
 * usage: java UpgradeOldClasses.java JAR   (rewrites JAR in place)
 */
public final class UpgradeOldClasses {

    private static final int JAVA_8 = 52;

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: java UpgradeOldClasses.java JAR");
            System.exit(2);
        }
        Path jar = Path.of(args[0]);
        Path out = jar.resolveSibling(jar.getFileName() + ".upgrading");
        int upgraded = 0;
        try (URLClassLoader classes = new URLClassLoader(new URL[] {jar.toUri().toURL()}, null);
             ZipInputStream in = new ZipInputStream(Files.newInputStream(jar));
             ZipOutputStream zip = new ZipOutputStream(Files.newOutputStream(out))) {
            // Computing stack maps needs the class hierarchy: the JDK's, then the jar's own.
            ClassFile classFile = ClassFile.of(ClassFile.StackMapsOption.GENERATE_STACK_MAPS,
                    ClassFile.ClassHierarchyResolverOption.of(ClassHierarchyResolver.defaultResolver()
                            .orElse(ClassHierarchyResolver.ofResourceParsing(classes))));
            for (ZipEntry e; (e = in.getNextEntry()) != null; ) {
                byte[] bytes = in.readAllBytes();
                if (e.getName().endsWith(".class") && !e.getName().endsWith("module-info.class")) {
                    ClassModel model = classFile.parse(bytes);
                    if (model.majorVersion() < JAVA_8) {
                        bytes = classFile.transformClass(model, ClassTransform.transformingMethodBodies(CodeTransform.ACCEPT_ALL)
                                .andThen((builder, element) -> {
                                    if (element instanceof ClassFileVersion) {
                                        builder.withVersion(JAVA_8, 0);
                                    } else {
                                        builder.with(element);
                                    }
                                }));
                        upgraded++;
                    }
                }
                ZipEntry copy = new ZipEntry(e.getName());
                copy.setTime(e.getTime());
                zip.putNextEntry(copy);
                zip.write(bytes);
                zip.closeEntry();
            }
        }
        Files.move(out, jar, StandardCopyOption.REPLACE_EXISTING);
        System.out.println("UpgradeOldClasses: " + upgraded + " classes of " + jar.getFileName() + " now Java 8 class files");
    }
}
