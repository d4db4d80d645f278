import HeraldEvents

/// A message the app's RongCloud IM connection delivered (the SDK's message listener, or the
/// offline messages it pulls on reconnect), in the form Herald takes it: the library call
/// ``events(account:)``, or the same fields as one JSON line for
/// `herald ingest --format rongcloud` (recognised by `messageUId`).
///
/// The message becomes a full `notify` (`partial: false`) of the same object its push made
/// (chat `<conversation>:<targetId>`, id = `StableID` of the UId), so a push that came first
/// is upgraded in place (SEMANTICS §4 rule 1) and a push that comes later is a duplicate.
/// An offline message the app does not notify about is `unreadOnly` (SEMANTICS 1.2): it
/// counts but does not notify, as IMKit shows no local notification for them. A recall is
/// `RC:RcNtf` with the recalled message's UId (the SDK replaces the message by that notice,
/// keeping its UId) and becomes the `delete` its push makes. The read sync another of the
/// user's devices sends (`RC:SRSMsg`) is a `readAll` of the conversation.
///
/// ```json
/// {"conversationType":3,"targetId":"g-42","senderUserId":"u-ada","messageUId":"C3MV-UN1E-0PJ4-8U2A",
///  "objectName":"RC:TxtMsg","sentTime":1754390000123,"content":"lunch?","senderName":"Ada",
///  "conversationTitle":"Team","mentioned":true,"offline":false}
/// ```
public struct RongCloudMessage: Codable, Hashable, Sendable {
    /// `RCConversationType` / `Conversation.ConversationType` as a number (1 private, 3 group, …).
    public var conversationType: Int
    /// The conversation's target as the SDK reports it on the receiver's side (in a private
    /// conversation, the other person).
    public var targetId: String
    /// The sender's user id.
    public var senderUserId: String
    /// The message's UId, the id RongCloud's server gives it (and its pushes carry).
    public var messageUId: String
    /// The message's object name (`RC:TxtMsg`, `RC:ImgMsg`, `RC:VCInvite`, `RC:RcNtf`, …).
    public var objectName: String
    /// The send time, in milliseconds.
    public var sentTime: Int64
    /// The text the app shows for it (its digest), if any.
    public var content: String?
    /// The sender's display name, if the app knows it.
    public var senderName: String?
    /// The conversation's title (a group's name), if the app knows it.
    public var conversationTitle: String?
    /// The message mentions the user (`mentionedInfo` names them, or everyone).
    public var mentioned: Bool
    /// Pulled as an offline (left-behind) message on reconnect, which the app does not notify.
    public var offline: Bool
    /// The call a call message (`RC:VCInvite`, `RC:VCModifyMem`, `RC:VCHangup`) belongs to.
    public var callId: String?

    /// Creates a connection message.
    public init(
        conversationType: Int, targetId: String, senderUserId: String, messageUId: String, objectName: String,
        sentTime: Int64, content: String? = nil, senderName: String? = nil, conversationTitle: String? = nil,
        mentioned: Bool = false, offline: Bool = false, callId: String? = nil
    ) {
        self.conversationType = conversationType
        self.targetId = targetId
        self.senderUserId = senderUserId
        self.messageUId = messageUId
        self.objectName = objectName
        self.sentTime = sentTime
        self.content = content
        self.senderName = senderName
        self.conversationTitle = conversationTitle
        self.mentioned = mentioned
        self.offline = offline
        self.callId = callId
    }

    private enum CodingKeys: String, CodingKey {
        case conversationType, targetId, senderUserId, messageUId, objectName, sentTime
        case content, senderName, conversationTitle, mentioned, offline, callId
    }

    /// Decodes the JSON form; `mentioned` and `offline` default to false.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            conversationType: try container.decode(Int.self, forKey: .conversationType),
            targetId: try container.decode(String.self, forKey: .targetId),
            senderUserId: try container.decode(String.self, forKey: .senderUserId),
            messageUId: try container.decode(String.self, forKey: .messageUId),
            objectName: try container.decode(String.self, forKey: .objectName),
            sentTime: try container.decode(Int64.self, forKey: .sentTime),
            content: try container.decodeIfPresent(String.self, forKey: .content),
            senderName: try container.decodeIfPresent(String.self, forKey: .senderName),
            conversationTitle: try container.decodeIfPresent(String.self, forKey: .conversationTitle),
            mentioned: try container.decodeIfPresent(Bool.self, forKey: .mentioned) ?? false,
            offline: try container.decodeIfPresent(Bool.self, forKey: .offline) ?? false,
            callId: try container.decodeIfPresent(String.self, forKey: .callId))
    }

    /// Whether a payload's members are this form rather than a push: a `messageUId`, no `rc`.
    static func isConnectionForm(_ members: [String: JSONValue]) -> Bool {
        members["messageUId"] != nil && members["rc"] == nil && members["aps"] == nil
    }

    /// Reads the JSON form from a payload, errors naming the field.
    init(_ fields: PayloadObject) throws(IngestError) {
        guard let type = try fields.integer("conversationType") else { throw fields.error("conversationType", "missing") }
        guard let sentTime = try fields.integer("sentTime") else { throw fields.error("sentTime", "missing") }
        guard sentTime >= 0 else { throw fields.error("sentTime", "must be >= 0, got \(sentTime)") }
        self.init(
            conversationType: Int(truncatingIfNeeded: type),
            targetId: try fields.requiredString("targetId"), senderUserId: try fields.string("senderUserId") ?? "",
            messageUId: try fields.string("messageUId") ?? "", objectName: try fields.requiredString("objectName"),
            sentTime: sentTime, content: try fields.string("content"), senderName: try fields.nonEmptyString("senderName"),
            conversationTitle: try fields.nonEmptyString("conversationTitle"),
            mentioned: try fields.flag("mentioned") ?? false, offline: try fields.flag("offline") ?? false,
            callId: try fields.nonEmptyString("callId"))
    }

    /// The chat of this message's conversation, `<conversation>:<targetId>`, as its pushes
    /// name it (a private push names the sender, who is the SDK's target on this side).
    public func chat() throws(IngestError) -> String {
        guard let conversation = RongCloudConversation(rawValue: conversationType) else {
            throw IngestError(format: .rongcloud, field: "conversationType", reason: "unknown conversation type \(conversationType)")
        }
        // The SDK's targetId is already the receiver's side: the other person of a private
        // conversation, even for the user's own messages synced from another device.
        guard let chat = RongCloudConversation.chat(conversation, target: targetId) else {
            throw IngestError(format: .rongcloud, field: "targetId", reason: "must be non-empty")
        }
        return chat
    }

    /// The events of this message for `account` (`rc:<appKey>|<userId>`): a full `notify`, the
    /// `delete` of a recall, the `endCall` of a hang-up, or a `note` for what changes nothing.
    public func events(account: String) throws(IngestError) -> [Event] {
        let chat = try chat()
        func note(_ reason: String) -> [Event] { [Event(account: account, .note(source: "rongcloud", reason: "connection: \(reason)"))] }
        switch objectName {
        case RongCloudAdapter.recallNotice:
            guard !messageUId.isEmpty else { return note("\(objectName) without the recalled message's UId") }
            return [Event(account: account, .delete(ids: [StableID.of(messageUId)], chat: chat))]
        case RongCloudAdapter.recallCommand:
            return note("\(objectName) is consumed by the SDK; feed the RC:RcNtf it leaves, with the recalled UId")
        case RongCloudAdapter.callHangup:
            guard let callId else { return note("\(objectName) names no callId, no call to end") }
            return [Event(account: account, .endCall(chat: chat, id: StableID.of(callId)))]
        case RongCloudAdapter.readSync:
            // IMKit clears the conversation's unread state and its notifications.
            return [Event(account: account, .readAll(chat: chat))]
        case _ where RongCloudAdapter.connectionOnly.contains(objectName):
            return note("\(objectName) changes no notification (read state: send readAll for the conversation)")
        default:
            break
        }
        guard !messageUId.isEmpty else { return note("no message UId, nothing to notify") }
        let isCall = RongCloudAdapter.callInvites.contains(objectName)
        let conversation = RongCloudConversation(rawValue: conversationType)
        return [
            Event(
                account: account,
                .notify(
                    Event.Notify(
                        chat: chat, kind: isCall ? .call : mentioned ? .mention : .message,
                        id: StableID.of(isCall ? callId ?? messageUId : messageUId),
                        date: sentTime / 1000, partial: false, unreadOnly: offline,
                        title: RongCloudAdapter.title(conversation, senderName: senderName, conversationTitle: conversationTitle),
                        body: content, sender: senderName)))
        ]
    }

    /// The `readAll` of a conversation whose unread state the app cleared (IMKit's
    /// `clearMessagesUnreadStatus`, or the read sync another device sent over the connection).
    public static func conversationRead(account: String, conversationType: Int, targetId: String) throws(IngestError) -> Event {
        let probe = RongCloudMessage(
            conversationType: conversationType, targetId: targetId, senderUserId: "", messageUId: "", objectName: "", sentTime: 0)
        return Event(account: account, .readAll(chat: try probe.chat()))
    }
}
