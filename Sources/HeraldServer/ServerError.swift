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
    var details: [String: JSONBody] = [:]
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
        var error: [String: JSONBody] = ["reason": .string(reason)]
        if !field.isEmpty { error["field"] = .string(field) }
        var body = details
        body["error"] = .object(error)
        var response = JSONBody.object(body).response(status: status)
        for field in headers { response.headers.append(field) }
        return response
    }
}

/// A small JSON value for response bodies, written with sorted keys so answers are stable.
indirect enum JSONBody: Sendable, Hashable, Codable {
    case string(String)
    case int(Int64)
    case uint(UInt64)
    case bool(Bool)
    case null
    case array([JSONBody])
    case object([String: JSONBody])

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .uint(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .null: try container.encodeNil()
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Int64.self) { self = .int(value) }
        else if let value = try? container.decode(UInt64.self) { self = .uint(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([JSONBody].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONBody].self)) }
    }

    /// The document as bytes (keys sorted), written by hand: no `JSONEncoder` per response.
    var bytes: [UInt8] {
        var writer = JSONWriter()
        write(to: &writer)
        return writer.bytes
    }

    private func write(to writer: inout JSONWriter) {
        switch self {
        case .string(let value): writer.string(value)
        case .int(let value): writer.int(value)
        case .uint(let value): writer.int(value)
        case .bool(let value): writer.bool(value)
        case .null: writer.null()
        case .array(let values):
            writer.arrayStart()
            for value in values { value.write(to: &writer) }
            writer.arrayEnd()
        case .object(let members):
            writer.objectStart()
            for key in members.keys.sorted() {
                writer.key(key)
                members[key]!.write(to: &writer)
            }
            writer.objectEnd()
        }
    }

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
