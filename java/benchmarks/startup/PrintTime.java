/** The floor a short-lived JVM pays anyway: start, print the time, exit. */
public class PrintTime {
    public static void main(String[] args) {
        System.out.println(System.currentTimeMillis());
    }
}
