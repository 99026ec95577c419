// Fidelity produces a fixed set of messages with real JMS clients (Artemis's Core JMS client and
// Qpid JMS over AMQP, both shipped in the Artemis distribution's lib/) and dumps a queue as one
// canonical JSON line per message, for fidelity_test.go. It is a test fixture: run it with
//
//   java -cp "$ARTEMIS_HOME/lib/*" Fidelity.java produce core|amqp URL USER PASSWORD QUEUE[,QUEUE...] SET
//   java -cp "$ARTEMIS_HOME/lib/*" Fidelity.java dump core|amqp URL USER PASSWORD QUEUE browse|consume COUNT
//
// produce sends message set SET (fidelity, expiry, char or stream-bytes) to each queue and
// prints the fid of every message of the set, one a line. dump prints one JSON object a line
// with every JMS-visible field of a message, then "end N". Bodies and values longer than 256
// characters are printed as their length and SHA-256.

import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import javax.jms.BytesMessage;
import javax.jms.Connection;
import javax.jms.ConnectionFactory;
import javax.jms.DeliveryMode;
import javax.jms.Destination;
import javax.jms.JMSException;
import javax.jms.MapMessage;
import javax.jms.Message;
import javax.jms.MessageConsumer;
import javax.jms.MessageEOFException;
import javax.jms.MessageProducer;
import javax.jms.ObjectMessage;
import javax.jms.Queue;
import javax.jms.QueueBrowser;
import javax.jms.Session;
import javax.jms.StreamMessage;
import javax.jms.TextMessage;
import javax.jms.Topic;

public class Fidelity {

   static final int LARGE = 10 << 20;
   static final long HOUR = 3_600_000L;

   public static void main(String[] args) throws Exception {
      if (args.length < 7) {
         System.err.println("usage: produce|dump core|amqp URL USER PASSWORD QUEUE SET|MODE [COUNT]");
         System.exit(2);
      }
      String proto = args[1];
      ConnectionFactory cf = proto.equals("core")
         ? new org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory(args[2])
         : new org.apache.qpid.jms.JmsConnectionFactory(args[2]);
      try (Connection conn = cf.createConnection(args[3], args[4])) {
         conn.start();
         Session session = conn.createSession(false, Session.AUTO_ACKNOWLEDGE);
         switch (args[0]) {
            case "produce" -> {
               String[] queues = args[5].split(",");
               for (int i = 0; i < queues.length; i++) {
                  produce(session, session.createQueue(queues[i]), proto, args[6], i == 0);
               }
            }
            case "dump" -> dump(session, session.createQueue(args[5]), args[6].equals("browse"), Integer.parseInt(args[7]));
            default -> throw new IllegalArgumentException("unknown mode " + args[0]);
         }
      }
   }

   // ---------------------------------------------------------------- produce

   static void produce(Session s, Queue queue, String proto, String set, boolean print) throws Exception {
      MessageProducer p = s.createProducer(queue);
      printSent = print;
      Queue replyTo = s.createQueue("fidelity.reply");
      String pre = proto + "-";
      if (set.equals("expiry")) {
         send(p, typed(s.createTextMessage("expires in an hour"), pre + "ttl-text", 1), DeliveryMode.PERSISTENT, 4, HOUR);
         send(p, typed(bytesOf(s, 300), pre + "ttl-bytes", 2), DeliveryMode.NON_PERSISTENT, 6, 2 * HOUR);
         send(p, typed(s.createTextMessage("never expires"), pre + "no-ttl", 3), DeliveryMode.PERSISTENT, 4, 0);
         return;
      }
      if (set.equals("char")) {
         // Entries JMS allows that the AMQP leg cannot carry today (see fidelity_test.go).
         MapMessage mapChar = s.createMapMessage();
         mapChar.setChar("char", 'ß');
         mapChar.setString("string", "beside a char");
         send(p, typed(mapChar, pre + "map-char", 1), DeliveryMode.PERSISTENT, 4, 0);
         StreamMessage streamChar = s.createStreamMessage();
         streamChar.writeChar('€');
         streamChar.writeString("after a char");
         send(p, typed(streamChar, pre + "stream-char", 2), DeliveryMode.PERSISTENT, 4, 0);
         return;
      }
      if (set.equals("stream-bytes")) {
         StreamMessage streamBytes = s.createStreamMessage();
         streamBytes.writeString("before the bytes");
         streamBytes.writeBytes(new byte[] {9, 8, 7});
         send(p, typed(streamBytes, pre + "stream-bytes", 1), DeliveryMode.PERSISTENT, 4, 0);
         return;
      }

      TextMessage text = s.createTextMessage("Grüße, 世界 ✓ fidelity");
      text.setJMSCorrelationID("corr-text");
      text.setJMSReplyTo(replyTo);
      text.setJMSType("type-text");
      text.setStringProperty("JMSXGroupID", "group-a");
      text.setIntProperty("JMSXGroupSeq", 1);
      send(p, typed(text, pre + "text", 1), DeliveryMode.PERSISTENT, 7, 0);

      send(p, plain(s.createTextMessage(null), pre + "text-null"), DeliveryMode.PERSISTENT, 4, 0);

      BytesMessage bytes = bytesOf(s, 1024);
      bytes.setJMSCorrelationID("corr-bytes");
      bytes.setJMSType("type-bytes");
      bytes.setStringProperty("JMSXGroupID", "group-a");
      bytes.setIntProperty("JMSXGroupSeq", 2);
      send(p, typed(bytes, pre + "bytes", 2), DeliveryMode.NON_PERSISTENT, 0, 0);

      MapMessage map = s.createMapMessage();
      map.setBoolean("bool", true);
      map.setByte("byte", (byte) -8);
      map.setShort("short", (short) -1000);
      map.setInt("int", Integer.MIN_VALUE);
      map.setLong("long", Long.MAX_VALUE);
      map.setFloat("float", -0.25f);
      map.setDouble("double", 1e300);
      map.setString("string", "map ✓");
      map.setString("empty", "");
      map.setBytes("bytes", new byte[] {0, 1, (byte) 0xfe, (byte) 0xff});
      map.setJMSReplyTo(replyTo);
      send(p, typed(map, pre + "map", 3), DeliveryMode.PERSISTENT, 9, 0);

      StreamMessage stream = s.createStreamMessage();
      stream.writeBoolean(false);
      stream.writeByte((byte) 127);
      stream.writeShort((short) 12345);
      stream.writeInt(-1);
      stream.writeLong(1L << 40);
      stream.writeFloat(3.5f);
      stream.writeDouble(-2.75);
      stream.writeString("stream ✓");
      // No char entries in maps and streams and no byte[] in streams: sets "char" and
      // "stream-bytes" have them.
      send(p, typed(stream, pre + "stream", 4), DeliveryMode.NON_PERSISTENT, 1, 0);

      send(p, typed(s.createObjectMessage(sampleObject()), pre + "object", 5), DeliveryMode.PERSISTENT, 5, 0);

      Message empty = s.createMessage();
      empty.setJMSCorrelationID("corr-empty");
      empty.setJMSType("type-empty");
      send(p, typed(empty, pre + "plain", 6), DeliveryMode.PERSISTENT, 3, 0);

      TextMessage ttl = s.createTextMessage("lives an hour");
      ttl.setJMSCorrelationID("corr-ttl");
      send(p, typed(ttl, pre + "ttl", 7), DeliveryMode.PERSISTENT, 6, HOUR);

      BytesMessage large = s.createBytesMessage();
      large.writeBytes(pattern(LARGE));
      large.setJMSType("type-large");
      send(p, typed(large, pre + "large", 8), DeliveryMode.PERSISTENT, 4, 0);

      if (proto.equals("core")) {
         TextMessage corrBytes = s.createTextMessage("binary correlation id");
         corrBytes.setJMSCorrelationIDAsBytes(new byte[] {1, 2, 3, (byte) 0xff});
         send(p, typed(corrBytes, pre + "corr-bytes", 9), DeliveryMode.PERSISTENT, 4, 0);

         TextMessage user = s.createTextMessage("with a user id");
         user.setStringProperty("JMSXUserID", "alice");
         send(p, typed(user, pre + "user-id", 10), DeliveryMode.PERSISTENT, 4, 0);
      } else {
         // Qpid JMS sends an ObjectMessage with this property as an AmqpValue of the object
         // (here a list) instead of Java serialization: an AMQP-native body.
         ObjectMessage amqpTyped = s.createObjectMessage(new ArrayList<>(List.of("a", 1, 2L, true)));
         amqpTyped.setBooleanProperty("JMS_AMQP_TYPED_ENCODING", true);
         send(p, plain(amqpTyped, pre + "object-amqp-typed"), DeliveryMode.PERSISTENT, 4, 0);
      }
   }

   static boolean printSent;

   static void send(MessageProducer p, Message m, int mode, int priority, long ttl) throws JMSException {
      p.send(m, mode, priority, ttl);
      if (printSent) {
         System.out.println(m.getStringProperty("fid"));
      }
   }

   static Message plain(Message m, String fid) throws JMSException {
      m.setStringProperty("fid", fid);
      return m;
   }

   // typed sets the fid and one application property of every JMS property type.
   static Message typed(Message m, String fid, int n) throws JMSException {
      plain(m, fid);
      m.setBooleanProperty("p_bool", n % 2 == 0);
      m.setByteProperty("p_byte", (byte) -n);
      m.setShortProperty("p_short", (short) (n * 1000));
      m.setIntProperty("p_int", n * 100_000);
      m.setLongProperty("p_long", Long.MIN_VALUE + n);
      m.setFloatProperty("p_float", n + 0.5f);
      m.setDoubleProperty("p_double", Math.PI * n);
      m.setStringProperty("p_string", "wert-" + n + " ✓");
      m.setStringProperty("p_empty", "");
      return m;
   }

   static BytesMessage bytesOf(Session s, int n) throws JMSException {
      BytesMessage b = s.createBytesMessage();
      b.writeBytes(pattern(n));
      return b;
   }

   static byte[] pattern(int n) {
      byte[] b = new byte[n];
      long x = 0x9E3779B97F4A7C15L;
      for (int i = 0; i < n; i++) {
         x ^= x << 13;
         x ^= x >>> 7;
         x ^= x << 17;
         b[i] = (byte) x;
      }
      return b;
   }

   static Serializable sampleObject() {
      TreeMap<String, Object> m = new TreeMap<>();
      m.put("answer", 42);
      m.put("name", "serialized ✓");
      m.put("list", new ArrayList<>(List.of(1L, "two", 3.0)));
      return m;
   }

   // ---------------------------------------------------------------- dump

   static void dump(Session s, Queue queue, boolean browse, int count) throws Exception {
      int n = 0;
      long deadline = System.currentTimeMillis() + 60_000;
      if (browse) {
         QueueBrowser b = s.createBrowser(queue);
         Enumeration<?> e = b.getEnumeration();
         while (n < count && System.currentTimeMillis() < deadline && e.hasMoreElements()) {
            System.out.println(canonical((Message) e.nextElement()));
            n++;
         }
         b.close();
      } else {
         MessageConsumer c = s.createConsumer(queue);
         while (n < count && System.currentTimeMillis() < deadline) {
            Message m = c.receive(5_000);
            if (m == null) {
               break;
            }
            System.out.println(canonical(m));
            n++;
         }
         c.close();
      }
      System.out.println("end " + n);
   }

   static String canonical(Message m) throws Exception {
      Map<String, Object> f = new TreeMap<>();
      f.put("fid", str(m.getStringProperty("fid")));
      f.put("class", kind(m));
      f.put("body", body(m));
      TreeMap<String, String> props = new TreeMap<>();
      for (Object name : Collections.list(m.getPropertyNames())) {
         props.put((String) name, value(m.getObjectProperty((String) name)));
      }
      f.put("properties", props);
      f.put("JMSMessageID", str(m.getJMSMessageID()));
      f.put("JMSTimestamp", Long.toString(m.getJMSTimestamp()));
      f.put("JMSExpiration", Long.toString(m.getJMSExpiration()));
      f.put("JMSPriority", Integer.toString(m.getJMSPriority()));
      f.put("JMSDeliveryMode", m.getJMSDeliveryMode() == DeliveryMode.PERSISTENT ? "PERSISTENT" : "NON_PERSISTENT");
      f.put("JMSCorrelationID", str(m.getJMSCorrelationID()));
      try {
         f.put("JMSCorrelationIDAsBytes", value(m.getJMSCorrelationIDAsBytes()));
      } catch (JMSException e) {
         f.put("JMSCorrelationIDAsBytes", "unsupported");
      }
      f.put("JMSReplyTo", destination(m.getJMSReplyTo()));
      f.put("JMSDestination", destination(m.getJMSDestination()));
      f.put("JMSType", str(m.getJMSType()));
      f.put("JMSRedelivered", Boolean.toString(m.getJMSRedelivered()));
      f.put("JMSDeliveryTime", Long.toString(m.getJMSDeliveryTime()));
      for (String x : new String[] {"JMSXGroupID", "JMSXGroupSeq", "JMSXUserID", "JMSXDeliveryCount"}) {
         f.put(x, value(m.getObjectProperty(x)));
      }
      return json(f);
   }

   static String kind(Message m) {
      if (m instanceof TextMessage) {
         return "TextMessage";
      } else if (m instanceof BytesMessage) {
         return "BytesMessage";
      } else if (m instanceof MapMessage) {
         return "MapMessage";
      } else if (m instanceof StreamMessage) {
         return "StreamMessage";
      } else if (m instanceof ObjectMessage) {
         return "ObjectMessage";
      }
      return "Message";
   }

   static String body(Message m) throws Exception {
      if (m instanceof TextMessage t) {
         return value(t.getText());
      } else if (m instanceof BytesMessage b) {
         byte[] data = new byte[(int) b.getBodyLength()];
         b.readBytes(data);
         return value(data);
      } else if (m instanceof MapMessage mm) {
         TreeMap<String, String> entries = new TreeMap<>();
         for (Object name : Collections.list(mm.getMapNames())) {
            entries.put((String) name, value(mm.getObject((String) name)));
         }
         return json(entries);
      } else if (m instanceof StreamMessage sm) {
         List<String> items = new ArrayList<>();
         for (int i = 0; i < 10_000; i++) {
            try {
               items.add(value(sm.readObject()));
            } catch (MessageEOFException end) {
               break;
            }
         }
         return items.toString();
      } else if (m instanceof ObjectMessage om) {
         return value(om.getObject());
      }
      return "(none)";
   }

   static String destination(Destination d) throws JMSException {
      if (d == null) {
         return "null";
      } else if (d instanceof Queue q) {
         return "queue:" + q.getQueueName();
      } else if (d instanceof Topic t) {
         return "topic:" + t.getTopicName();
      }
      return d.getClass().getSimpleName() + ":" + d;
   }

   // value renders a value with its Java type, so that an int and a long of the same number differ.
   static String value(Object v) throws Exception {
      if (v == null) {
         return "null";
      } else if (v instanceof byte[] b) {
         return b.length <= 64 ? "byte[]:" + hex(b) : "byte[" + b.length + "]:sha256:" + sha256(b);
      } else if (v instanceof Map<?, ?> m) {
         TreeMap<String, String> entries = new TreeMap<>();
         for (Map.Entry<?, ?> e : m.entrySet()) {
            entries.put(String.valueOf(e.getKey()), value(e.getValue()));
         }
         return v.getClass().getSimpleName() + ":" + entries;
      } else if (v instanceof List<?> l) {
         List<String> items = new ArrayList<>();
         for (Object o : l) {
            items.add(value(o));
         }
         return v.getClass().getSimpleName() + ":" + items;
      } else if (v instanceof Character c) {
         return "Character:U+" + Integer.toHexString(c);
      }
      String s = v.toString();
      if (s.length() > 256) {
         s = "[" + s.length() + "]sha256:" + sha256(s.getBytes(StandardCharsets.UTF_8));
      }
      return v.getClass().getSimpleName() + ":" + s;
   }

   static String str(String s) {
      return s == null ? "null" : "String:" + s;
   }

   static String hex(byte[] b) {
      StringBuilder sb = new StringBuilder();
      for (byte x : b) {
         sb.append(String.format("%02x", x));
      }
      return sb.toString();
   }

   static String sha256(byte[] b) throws Exception {
      return hex(MessageDigest.getInstance("SHA-256").digest(b));
   }

   // json writes a map of strings and nested maps as a JSON object.
   static String json(Map<String, ?> m) {
      StringBuilder sb = new StringBuilder("{");
      for (Map.Entry<String, ?> e : m.entrySet()) {
         if (sb.length() > 1) {
            sb.append(',');
         }
         quote(sb, e.getKey());
         sb.append(':');
         if (e.getValue() instanceof Map<?, ?> nested) {
            @SuppressWarnings("unchecked")
            Map<String, ?> n = (Map<String, ?>) nested;
            sb.append(json(n));
         } else {
            quote(sb, String.valueOf(e.getValue()));
         }
      }
      return sb.append('}').toString();
   }

   static void quote(StringBuilder sb, String s) {
      sb.append('"');
      for (char c : s.toCharArray()) {
         switch (c) {
            case '"' -> sb.append("\\\"");
            case '\\' -> sb.append("\\\\");
            default -> {
               if (c < 0x20) {
                  sb.append(String.format("\\u%04x", (int) c));
               } else {
                  sb.append(c);
               }
            }
         }
      }
      sb.append('"');
   }

}
