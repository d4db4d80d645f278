import Foundation
import HeraldEvents
import HeraldReplication
import Hummingbird
import Logging

/// A request the service refuses, answered with its status and a JSON body naming the field
/// at fault: `{"error": {"field": "events[2].chat", "reason": "must not be empty"}}`.
public struct ServerError: HTTPResponseError, CustomStringConvertible, Sendable {
    /// The HTTP status.
    public var status: HTTPResponse.Status
    /// The field (or header, or query parameter) at fault; empty when none applies.
    public var field: String
    /// What is wrong, and where it helps, what to do.
    public var reason: String
    /// Extra members of the JSON body (e.g. the rejected lines of an ingest).
    var details: [String: JSONValue] = [:]
    /// Extra response headers (e.g. `WWW-Authenticate`).
    var headers: HTTPFields = [:]

    /// Creates an error.
    public init(_ status: HTTPResponse.Status, field: String = "", _ reason: String) {
        self.status = status
        self.field = field
        self.reason = reason
    }

    /// 400: the request is malformed.
    static func badRequest(field: String = "", _ reason: String) -> Self { Self(.badRequest, field: field, reason) }
    /// 503: the store is closed (shutting down, or compacting).
    static func unavailable(_ reason: String) -> Self { Self(.serviceUnavailable, reason) }
    /// 404: no such account, object or route.
    static func notFound(field: String = "", _ reason: String) -> Self { Self(.notFound, field: field, reason) }

    public var description: String { field.isEmpty ? "\(status.code) \(reason)" : "\(status.code) \(field): \(reason)" }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var error: [String: JSONValue] = ["reason": .string(reason)]
        if !field.isEmpty { error["field"] = .string(field) }
        var body = details
        body["error"] = .object(error)
        var response = JSONValue.object(body).response(status: status)
        for field in headers { response.headers.append(field) }
        return response
    }
}

extension JSONValue {
    /// A response with this document as its body.
    func response(status: HTTPResponse.Status = .ok) -> Response {
        Response.json(bytes, status: status)
    }
}

extension Response {
    /// A JSON response with `bytes` as its body (a newline is added, for curl users).
    static func json(_ bytes: some Collection<UInt8>, status: HTTPResponse.Status = .ok, headers extra: HTTPFields = [:]) -> Response {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(bytes.count + 1)
        buffer.writeBytes(bytes)
        buffer.writeInteger(UInt8(ascii: "\n"))
        var headers: HTTPFields = [.contentType: "application/json"]
        headers.append(contentsOf: extra)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: buffer))
    }

    /// A response with `bytes` as its body, as they are, of type `contentType`.
    static func text(_ bytes: some Collection<UInt8>, contentType: String) -> Response {
        var buffer = ByteBuffer()
        buffer.writeBytes(bytes)
        return Response(status: .ok, headers: [.contentType: contentType], body: ResponseBody(byteBuffer: buffer))
    }
}

/// Answers errors that are not ``ServerError``s (the store's, LMDB's) with a JSON 500 naming
/// the error, and logs them; payload texts never appear in store errors, only paths and seqs.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as any HTTPResponseError {
            throw error
        } catch let error as ReplicationError {
            // The replicated log refused or failed the write: nothing was acknowledged.
            logger.warning("request refused by the replicated log", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            throw ServerError(replication: error)
        } catch {
            logger.error("request failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            throw ServerError(.internalServerError, "\(error)")
        }
    }
}

extension ServerError {
    /// 503 for a write the replicated log refused: with `Retry-After` when retrying helps
    /// (PostgreSQL unavailable, an outcome unknown), without when it never will here (fenced,
    /// a follower).
    init(replication error: ReplicationError) {
        self.init(.serviceUnavailable, error.message)
        if error.isRetryable { headers[.retryAfter] = "1" }
    }
}
