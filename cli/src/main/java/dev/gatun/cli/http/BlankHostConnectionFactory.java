package dev.gatun.cli.http;

import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HostPortHttpField;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.internal.HttpConnection;

/**
 * HTTP/1.1 as clients of a unix socket speak it: dockerd sends an empty {@code Host:} header
 * (it dials a unix socket, so there is no host), which Jetty rejects as "400 Blank Host" (and
 * without any Host it takes the socket's path as the authority and rejects that). Connections
 * made here read an empty Host header as "localhost"; everything else is Jetty's own parsing.
 */
final class BlankHostConnectionFactory extends HttpConnectionFactory {

    @Override
    public Connection newConnection(Connector connector, EndPoint endPoint) {
        HttpConnection connection = new HttpConnection(getHttpConfiguration(), connector, endPoint) {
            @Override
            protected RequestHandler newRequestHandler() {
                return new RequestHandler() {
                    @Override
                    public void parsedHeader(HttpField field) {
                        super.parsedHeader(field.getHeader() == HttpHeader.HOST && field.getValue().isBlank()
                                ? new HostPortHttpField("localhost") : field);
                    }
                };
            }
        };
        connection.setUseInputDirectByteBuffers(isUseInputDirectByteBuffers());
        connection.setUseOutputDirectByteBuffers(isUseOutputDirectByteBuffers());
        return configure(connection, connector, endPoint);
    }
}
