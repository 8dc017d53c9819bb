package coaplab;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.eclipse.californium.core.CoapResource;
import org.eclipse.californium.core.CoapServer;
import org.eclipse.californium.core.coap.BlockOption;
import org.eclipse.californium.core.coap.CoAP.ResponseCode;
import org.eclipse.californium.core.coap.MessageObserverAdapter;
import org.eclipse.californium.core.coap.Option;
import org.eclipse.californium.core.coap.Request;
import org.eclipse.californium.core.coap.Response;
import org.eclipse.californium.core.coap.option.IntegerOptionDefinition;
import org.eclipse.californium.core.coap.option.MapBasedOptionRegistry;
import org.eclipse.californium.core.coap.option.StandardOptionRegistry;
import org.eclipse.californium.core.config.CoapConfig;
import org.eclipse.californium.core.config.CoapConfig.CongestionControlMode;
import org.eclipse.californium.core.network.CoapEndpoint;
import org.eclipse.californium.core.network.serialization.UdpDataSerializer;
import org.eclipse.californium.core.server.resources.CoapExchange;
import org.eclipse.californium.elements.AddressEndpointContext;
import org.eclipse.californium.elements.config.Configuration;
import org.eclipse.californium.elements.config.UdpConfig;

/**
 * coaplab's Californium endpoints on the emulated link (docs/emulation.md, "Third-party
 * endpoints"), driven by python/coaplab/thirdparty.py.
 *
 * <pre>
 * client KEY=VALUE...   the clients: one CoapEndpoint per client, bound to its own address
 * server KEY=VALUE...   the server: /sensors answers GET with the workload's body
 * </pre>
 *
 * The client prints one line per exchange on stdout,
 * {@code EX client start_s end_s ok retransmissions timed_out}, times in seconds from the
 * emulation's time 0 ({@code epoch_ns}, CLOCK_MONOTONIC: what System.nanoTime reads on Linux).
 * Every run is bounded: nothing is sent after {@code max_s}, and the process exits then.
 */
public final class CaliforniumDriver {

	static {
		CoapConfig.register();
		UdpConfig.register();
	}

	private static final String SERVER = "192.0.2.1";

	public static void main(String[] argv) throws Exception {
		Map<String, String> a = new HashMap<>();
		for (int i = 1; i < argv.length; i++) {
			int eq = argv[i].indexOf('=');
			a.put(argv[i].substring(0, eq), argv[i].substring(eq + 1));
		}
		if (argv.length > 0 && argv[0].equals("client")) {
			client(a);
		} else if (argv.length > 0 && argv[0].equals("server")) {
			server(a);
		} else {
			System.err.println("usage: CaliforniumDriver client|server KEY=VALUE...");
			System.exit(2);
		}
		System.exit(0);
	}

	/** The scenario's [coap] parameters as Californium's configuration (CoapConfig). */
	private static Configuration config(Map<String, String> a) {
		Configuration c = Configuration.createStandardWithoutFile();
		c.set(CoapConfig.ACK_TIMEOUT, Math.round(Double.parseDouble(a.get("ack_timeout_s")) * 1000),
				TimeUnit.MILLISECONDS);
		c.set(CoapConfig.ACK_INIT_RANDOM, Float.parseFloat(a.get("ack_random_factor")));
		c.set(CoapConfig.MAX_RETRANSMIT, Integer.parseInt(a.get("max_retransmit")));
		c.set(CoapConfig.NSTART, Integer.parseInt(a.get("nstart")));
		c.set(CoapConfig.CONGESTION_CONTROL_ALGORITHM, CongestionControlMode.valueOf(a.get("cc")));
		// Few threads: tens of endpoints share two cores with the emulator.
		c.set(CoapConfig.PROTOCOL_STAGE_THREAD_COUNT, 1);
		c.set(UdpConfig.UDP_RECEIVER_THREAD_COUNT, 1);
		c.set(UdpConfig.UDP_SENDER_THREAD_COUNT, 1);
		return c;
	}

	private static double since(long epoch) {
		return (System.nanoTime() - epoch) / 1e9;
	}

	private static void client(Map<String, String> a) throws Exception {
		long epoch = Long.parseLong(a.get("epoch_ns"));
		long deadline = epoch + (long) (Double.parseDouble(a.get("max_s")) * 1e9);
		String[] addresses = a.get("addresses").split(",");
		String[] starts = a.get("starts").split(",");
		int exchanges = Integer.parseInt(a.get("exchanges"));
		int szx = Integer.parseInt(a.getOrDefault("block_szx", "-1"));
		long resource = Long.parseLong(a.getOrDefault("resource_bytes", "0"));
		int nstart = Integer.parseInt(a.get("nstart"));
		Configuration cfg = config(a);
		// The driver walks Block2 itself (one request per block, each block one exchange as in
		// the simulator), so Californium's transparent block-wise mode is off on the client:
		// CoapConfig.MAX_RESOURCE_BODY_SIZE, "0 to disable transparent blockwise mode".
		cfg.set(CoapConfig.MAX_RESOURCE_BODY_SIZE, 0);
		List<Thread> threads = new ArrayList<>();
		for (int i = 0; i < addresses.length; i++) {
			final int client = i;
			final long start = epoch + (long) (Double.parseDouble(starts[i]) * 1e9);
			CoapEndpoint ep = new CoapEndpoint.Builder().setConfiguration(cfg)
					.setInetSocketAddress(new InetSocketAddress(addresses[i], 0)).build();
			ep.start();
			// continuous: NSTART workers share the client's exchanges (NSTART outstanding at
			// most, as the simulator's client keeps them); firmware: one block after the other.
			int workers = szx >= 0 ? 1 : Math.max(1, nstart);
			AtomicInteger left = new AtomicInteger(exchanges);
			for (int w = 0; w < workers; w++) {
				Thread t = new Thread(() -> {
					try {
						sleepUntil(start);
						if (szx >= 0) {
							firmware(ep, client, szx, resource, epoch, deadline);
						} else {
							while (left.getAndDecrement() > 0 && System.nanoTime() < deadline - 1_000_000_000L) {
								exchange(ep, client, -1, 0, -1, epoch, deadline);
							}
						}
					} catch (InterruptedException e) {
						Thread.currentThread().interrupt();
					}
				});
				t.setDaemon(true);
				threads.add(t);
			}
		}
		warmUp();
		// In clients.log: how long before time 0 the endpoints were up (negative: late, and the
		// first clients started after their simulated offsets).
		System.err.printf("californium: %d endpoints ready %.3f s before time 0, CONGESTION_CONTROL_ALGORITHM=%s%n",
				addresses.length, -since(epoch), cfg.get(CoapConfig.CONGESTION_CONTROL_ALGORITHM));
		for (Thread t : threads) {
			t.start();
		}
		for (Thread t : threads) {
			t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000 + 5000));
		}
		System.out.flush();
	}

	/**
	 * Loads and compiles the request path before time 0 (a first request otherwise leaves ms
	 * late, class loading): builds and serialises a request like the workload's, sends nothing.
	 */
	private static void warmUp() {
		for (int i = 0; i < 200; i++) {
			Request req = Request.newGet();
			req.setURI("coap://" + SERVER + ":5683/sensors");
			req.getOptions().setBlock2(2, false, i);
			req.setMID(i);
			req.setToken(new byte[] { 1, 2, 3, 4, 5, 6, 7, (byte) i });
			req.setDestinationContext(new AddressEndpointContext(new InetSocketAddress(SERVER, 5683)));
			new UdpDataSerializer().serializeRequest(req);
		}
	}

	private static void sleepUntil(long t) throws InterruptedException {
		long d = t - System.nanoTime();
		if (d > 0) {
			TimeUnit.NANOSECONDS.sleep(d);
		}
	}

	private static void firmware(CoapEndpoint ep, int client, int szx, long resource, long epoch, long deadline)
			throws InterruptedException {
		long block = 1L << (szx + 4);
		long blocks = Math.max(1, (resource + block - 1) / block);
		for (int num = 0; num < blocks && System.nanoTime() < deadline - 1_000_000_000L; num++) {
			long want = Math.min(block, resource - num * block);
			if (!exchange(ep, client, szx, num, want, epoch, deadline)) {
				return; // a block given up: the transfer has failed (the simulator stops too)
			}
		}
	}

	/**
	 * One GET of /sensors (block `num` of size 2^(szx+4) when szx >= 0); prints its line.
	 * `want`: the payload length that counts as success (-1: any 2.05).
	 */
	private static boolean exchange(CoapEndpoint ep, int client, int szx, int num, long want, long epoch,
			long deadline) throws InterruptedException {
		Request req = Request.newGet();
		req.setURI("coap://" + SERVER + ":5683/sensors");
		if (szx >= 0) {
			req.getOptions().setBlock2(szx, false, num);
		}
		AtomicInteger retransmissions = new AtomicInteger();
		req.addMessageObserver(new MessageObserverAdapter() {

			@Override
			public void onRetransmission() {
				retransmissions.incrementAndGet();
			}
		});
		double start = since(epoch);
		ep.sendRequest(req);
		long wait = Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
		Response r = req.waitForResponse(wait);
		boolean ok = r != null && r.getCode() == ResponseCode.CONTENT
				&& (want < 0 || r.getPayloadSize() == want);
		if (ok && szx >= 0) {
			BlockOption b2 = r.getOptions().getBlock2();
			ok = b2 == null ? num == 0 : b2.getNum() == num && b2.getSzx() == szx;
		}
		double end = since(epoch);
		if (r == null) {
			req.cancel();
		}
		synchronized (System.out) {
			System.out.printf("EX %d %.6f %.6f %d %d %d%n", client, start, end, ok ? 1 : 0, retransmissions.get(),
					req.isTimedOut() ? 1 : 0);
		}
		return ok;
	}

	private static void server(Map<String, String> a) throws Exception {
		long size = Long.parseLong(a.get("body_bytes"));
		byte[] body = new byte[(int) size];
		for (int i = 0; i < body.length; i++) {
			body[i] = (byte) ((i * 7 + 1) & 0xFF); // thirdparty.resource's pattern
		}
		Configuration cfg = config(a);
		// Whole bodies up to the resource are sliced into Block2 responses in the block size
		// the client asks for (RFC 7959 §2.4); a continuous response goes in one message.
		cfg.set(CoapConfig.MAX_RESOURCE_BODY_SIZE, (int) Math.max(8192, size + 1));
		cfg.set(CoapConfig.MAX_MESSAGE_SIZE, (int) Math.max(1024, Math.min(size, 65000)));
		// FASOR's Rexmit-Cnt (coap.cc = "fasor-rc", docs/emulation.md "FASOR's Rexmit-Cnt and
		// Californium"): Californium 3.14.0 has no TransmissionCountOption and drops unknown
		// elective options (DataParser.createOption returns null), so the option is registered
		// here as the maintainer's TransmissionCountOption defines it (github.com/boaks/californium,
		// branch feature/transmission_counter, commit 377100c: an integer of exactly one byte,
		// the transmission number from 1; coaplab sends that under Californium's numbers), and
		// the handler transcribes it from the request into the piggybacked response as that
		// class's transcribe(request, response) does.
		int rexmit = Integer.parseInt(a.getOrDefault("rexmit_option", "0"));
		IntegerOptionDefinition counter = rexmit == 0 ? null
				: new IntegerOptionDefinition(rexmit, "Retransmission Counter", true, 1, 1);
		if (counter != null) {
			StandardOptionRegistry.setDefaultOptionRegistry(
					new MapBasedOptionRegistry(StandardOptionRegistry.getDefaultOptionRegistry(), counter));
		}
		CoapServer server = new CoapServer(cfg);
		server.addEndpoint(new CoapEndpoint.Builder().setConfiguration(cfg)
				.setInetSocketAddress(new InetSocketAddress(SERVER, 5683)).build());
		server.add(new CoapResource("sensors") {

			@Override
			public void handleGET(CoapExchange exchange) {
				Response response = new Response(ResponseCode.CONTENT);
				response.setPayload(body);
				Option count = counter == null ? null
						: exchange.advanced().getRequest().getOptions().getOtherOption(counter);
				if (count != null) {
					response.getOptions().addOtherOption(count);
				}
				exchange.respond(response);
			}
		});
		server.start();
		Thread.sleep((long) (Double.parseDouble(a.get("max_s")) * 1000));
		server.destroy();
	}
}
