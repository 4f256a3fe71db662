/**
 * The local API: HTTP + JSON on the serve's unix socket, its paths and routes, the OpenAPI
 * document, the event stream. Requests become the service's typed requests; forwarded calls go to
 * {@code ForwardedCalls}, which the serve implements. May import service, json, wire, events and
 * http.
 */
package dev.gatun.cli.api;
