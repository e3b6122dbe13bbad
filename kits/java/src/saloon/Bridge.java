package saloon;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Serves the gRPC server on a unix socket. grpc-java serves unix sockets only through netty's
 * native epoll transport, and Debian's netty ships without its native library; so the gRPC
 * server listens on netty's in-process transport (a {@link LocalAddress}: no port, no
 * network), and this bridge accepts each connection on the unix socket with the JDK's own
 * unix-domain channels (Java 16+) and copies its bytes both ways, unchanged.
 */
final class Bridge {
    private static final int BUFFER = 64 * 1024;

    private final ServerSocketChannel listener;
    private final EventLoopGroup group;
    private final LocalAddress target;

    Bridge(Path socket, EventLoopGroup group, LocalAddress target) throws IOException {
        this.group = group;
        this.target = target;
        Files.deleteIfExists(socket);
        listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        listener.bind(UnixDomainSocketAddress.of(socket));
    }

    /** Accepts connections until the listener is closed (on a daemon thread). */
    void start() {
        Thread accept = new Thread(this::acceptLoop, "saloon-uds-accept");
        accept.setDaemon(true);
        accept.start();
    }

    void close() {
        try {
            listener.close();
        } catch (IOException e) {
            // closing: nothing to do
        }
    }

    private void acceptLoop() {
        while (listener.isOpen()) {
            SocketChannel client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return;
            }
            try {
                connect(client);
            } catch (Exception e) {
                System.err.println("saloon runtime: a connection could not be served: " + e);
                closeQuietly(client);
            }
        }
    }

    private void connect(SocketChannel client) throws InterruptedException {
        Channel local = new Bootstrap()
                .group(group)
                .channel(LocalChannel.class)
                .handler(new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        ByteBuf buf = (ByteBuf) msg;
                        try {
                            for (ByteBuffer part : buf.nioBuffers()) {
                                while (part.hasRemaining()) {
                                    client.write(part);
                                }
                            }
                        } catch (IOException e) {
                            ctx.close();
                        } finally {
                            buf.release();
                        }
                    }

                    @Override
                    public void channelInactive(ChannelHandlerContext ctx) {
                        closeQuietly(client);
                    }
                })
                .connect(target)
                .sync()
                .channel();
        Thread pump = new Thread(() -> pump(client, local), "saloon-uds-read");
        pump.setDaemon(true);
        pump.start();
    }

    /** Copies what the client sends to the gRPC server until either side closes. */
    private static void pump(SocketChannel client, Channel local) {
        ByteBuffer buffer = ByteBuffer.allocate(BUFFER);
        try {
            while (client.read(buffer) >= 0) {
                buffer.flip();
                if (buffer.hasRemaining()) {
                    local.writeAndFlush(Unpooled.copiedBuffer(buffer));
                }
                buffer.clear();
            }
        } catch (IOException e) {
            // the client went away: close the server's side below
        }
        local.close();
        closeQuietly(client);
    }

    private static void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            // already closed
        }
    }
}
