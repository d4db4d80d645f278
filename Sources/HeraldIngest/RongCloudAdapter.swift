import HeraldEvents

/// Adapts RongCloud IM pushes, and the messages an app's IM connection delivers, to
/// canonical events. The mapping table, with every form, is `schema/rongcloud-push.md`.
///
/// Forms (see ``RongCloudPush``): iOS APNs `userInfo` (`aps` beside `rc` {`cType`, `fId`,
/// `oName`, `tId`, `id`, `msgTime`, `rc-dlt-identifier`, …} and `appData`), IMKit's local
/// notification `userInfo` (`rc` with `mId`), the Android FCM data map (`message`: JSON text),
/// vendor intent extras (`rc` as JSON text beside `appData`, `content`, `fromUserName`,
/// `timestamp`), the legacy Xiaomi content (`channelType`, `channelId`, `fromUserId`), the
/// app-facing `PushNotificationMessage`, and the connection's message (``RongCloudMessage``,
/// recognised by `messageUId`).
///
/// Mapping; no payload names the app key, so the account comes from the context
/// (`rc:<appKey>|<userId>`):
/// - chat `<conversation>:<targetId>` (``RongCloudConversation/chatName``), the target on the
///   receiver's side: iOS names it `rc.tId` (in a private or encrypted conversation the
///   sender `fId`, iOS putting the receiver there); every Android form names it `targetId`
///   (the legacy Xiaomi content `channelId` for a discussion, group or chat room, else the
///   sender), `rc.tId` being the receiver's own id there; an Android form without a
///   conversation type is the push service's (9, as RongCloud's SDK reads it);
/// - a recall (object name `RC:RcCmd` with `rc-dlt-identifier`, or `RC:RcNtf` carrying the
///   recalled message's UId) → `delete` of ``StableID`` of the recalled UId, never a notify;
/// - `RC:VCHangup` → `endCall` of the call its `callId` names, else a `note`;
/// - no message UId → `note` (an id is never guessed: IMKit's `mId` is a local row id);
/// - otherwise `notify`, id = ``StableID`` of the UId (of `callId` for a call), kind `call` for
///   `RC:VCInvite` / `RC:VCModifyMem`, `mention` when the form says the user was mentioned,
///   else `message`; `partial: true`, title and body from the alert or `pushTitle` /
///   `pushContent`, date from `msgTime` / `timeStamp` (milliseconds), else the receive time;
/// - a push-service notice (conversation 9, `PH`) → `notify` in `push_service`
///   (`push_service:<targetId>` when it names one); `pushFlag` says nothing of the chat;
/// - read receipts and read sync (`RC:ReadNtf`, `RC:RRReqMsg`, `RC:RRRspMsg`, `RC:SRSMsg`)
///   travel only over the connection; one met in a push is a `note`.
struct RongCloudAdapter {
    /// Object names of a recall: the command (`RC:RcCmd`) and the notice that replaces the
    /// recalled message (`RC:RcNtf`).
    static let recallCommand = "RC:RcCmd"
    static let recallNotice = "RC:RcNtf"
    /// Object names of a call invitation (RongCallLib's invite, and the invite of members
    /// added to a running call).
    static let callInvites: Set<String> = ["RC:VCInvite", "RC:VCModifyMem"]
    /// The object name of a hang-up.
    static let callHangup = "RC:VCHangup"
    /// Read receipts and read sync: RongCloud sends them over the connection only.
    static let connectionOnly: Set<String> = ["RC:ReadNtf", "RC:RRReqMsg", "RC:RRRspMsg", readSync, "RC:TypSts"]
    /// The read sync another of the user's devices sends when it reads a conversation.
    static let readSync = "RC:SRSMsg"

    let context: IngestContext

    /// Decodes one RongCloud payload.
    static func decode(_ bytes: [UInt8], context: IngestContext) throws(IngestError) -> IngestResult {
        let root = try PayloadObject.parse(bytes, format: .rongcloud)
        return IngestResult(format: .rongcloud, events: try RongCloudAdapter(context: context).adapt(root), encrypted: false)
    }

    /// Adapts a payload object.
    func adapt(_ root: PayloadObject) throws(IngestError) -> [Event] {
        let account = try context.resolveAccount(named: nil, field: "account", format: .rongcloud)
        if RongCloudMessage.isConnectionForm(root.members) {
            return try RongCloudMessage(root).events(account: account)
        }
        guard let push = try RongCloudPush.read(root) else {
            throw root.error("rc", "missing: not a RongCloud push (no rc, channelType, pushId or FCM message)")
        }
        return try events(push, account: account)
    }

    /// The events of one push.
    func events(_ push: RongCloudPush, account: String) throws(IngestError) -> [Event] {
        func note(_ reason: String) -> [Event] {
            [Event(account: account, .note(source: "rongcloud", reason: "\(push.form.rawValue): \(reason)"))]
        }
        if let ignored = push.ignored { return note(ignored) }
        let objectName = push.objectName
        let conversation = push.conversation
        let chat = push.chat
        if objectName == Self.recallCommand || objectName == Self.recallNotice {
            let recalled = push.recalledUId ?? (objectName == Self.recallNotice ? push.uid : nil)
            guard let recalled else { return note("\(objectName!) names no recalled message (rc-dlt-identifier)") }
            return [Event(account: account, .delete(ids: [StableID.of(recalled)], chat: chat))]
        }
        if let objectName, Self.connectionOnly.contains(objectName) {
            return note("\(objectName) travels over the IM connection only, nothing to apply")
        }
        if objectName == Self.callHangup {
            guard let callId = push.callId else { return note("\(Self.callHangup) names no callId, no call to end") }
            return [Event(account: account, .endCall(chat: try require(chat, push), id: StableID.of(callId)))]
        }
        guard let uid = push.uid else {
            if let local = push.localMessageId {
                return note("local message id \(local) only, no message UId: the app feeds the message itself (RongCloudMessage)")
            }
            return note("no message UId, nothing to notify")
        }
        let isCall = objectName.map(Self.callInvites.contains) == true
        let kind: NotificationKind = isCall ? .call : push.mentioned ? .mention : .message
        let id = StableID.of(isCall ? push.callId ?? uid : uid)
        let title = push.title ?? Self.title(conversation, senderName: push.senderName, conversationTitle: push.conversationTitle)
        return [
            Event(
                account: account,
                .notify(
                    Event.Notify(
                        chat: try require(chat, push), kind: kind, id: id, date: push.date ?? context.receivedAt, partial: true,
                        title: title, body: push.body, sender: push.senderName)))
        ]
    }

    /// `chat`, or an error naming what is missing from `push`.
    func require(_ chat: String?, _ push: RongCloudPush) throws(IngestError) -> String {
        if let chat { return chat }
        guard let conversation = push.conversation else {
            throw IngestError(format: .rongcloud, field: push.conversationField, reason: "missing")
        }
        throw IngestError(format: .rongcloud, field: push.targetField, reason: "missing: the \(conversation.chatName) conversation's target")
    }

    /// A notification's title when the payload gives none: the sender's name in a one-to-one
    /// conversation, else the conversation's title (a group's name), else the sender's name.
    static func title(_ conversation: RongCloudConversation?, senderName: String?, conversationTitle: String?) -> String? {
        if conversation?.isOneToOne == true { return senderName ?? conversationTitle }
        return conversationTitle ?? senderName
    }
}
