import HeraldEvents

extension TelegramAdapter {
    /// One push being mapped: the push, its account and conversation, and how it arrived.
    struct Scope {
        let push: TelegramPush
        let account: String
        let chat: String?
        let encrypted: Bool
        /// The receive time, the date of a push that names none.
        let receivedAt: Int64

        var custom: PayloadObject { push.custom }

        /// An event of this push's account.
        func event(_ payload: Event.Payload) -> Event { Event(account: account, payload) }

        /// A one-note result.
        func note(_ reason: String) -> [Event] { [event(.note(source: "telegram", reason: reason))] }

        /// The conversation, which the mapping needs.
        func requireChat() throws(IngestError) -> String {
            guard let chat else {
                throw IngestError(
                    format: .telegram, field: custom.path,
                    reason: "names no conversation (channel_id, chat_id, from_id or encryption_id)")
            }
            return chat
        }

        /// The events of a push with key `locKey`.
        func apply(_ locKey: String) throws(IngestError) -> [Event] {
            switch locKey {
            case "MESSAGE_DELETED":
                guard let ids = try orElse(custom.ids("messages"), custom.id("msg_id").map { [$0] }) else {
                    throw custom.error("messages", "missing")
                }
                return [event(.delete(ids: ids, chat: chat))]
            case "READ_HISTORY":
                return [event(.read(chat: try requireChat(), maxId: try custom.requiredID("max_id")))]
            case "READ_REACTION":
                let ids = try orElse(custom.ids("messages"), [custom.requiredID("msg_id")]) ?? []
                return [event(.readReactions(chat: try requireChat(), ids: ids))]
            case "SESSION_REVOKE":
                if encrypted { return [event(.revoke)] }
                return note("SESSION_REVOKE ignored: honoured only when the push came encrypted")
            case "MESSAGE_ANNOUNCEMENT":
                return try announcement()
            case "ENCRYPTED_MESSAGE":
                return try secretMessage(locKey)
            case "":
                if let chat, let maxId = try custom.id("max_id") {
                    return [event(.read(chat: chat, maxId: maxId))]
                }
                return note("empty loc_key without max_id and a chat: nothing to apply")
            default:
                break
            }
            if let why = TelegramAdapter.stateFreeKeys[locKey] { return note("\(locKey): \(why)") }
            if locKey.hasPrefix("STORY_") || locKey.hasPrefix("REACT_STORY") {
                return note("\(locKey): story notification, stories are not notifications here")
            }
            if let action = TelegramAdapter.callAction(locKey) { return try call(locKey, action) }
            if locKey.hasPrefix("ENCRYPTION_") {
                let id = try custom.requiredID("encryption_id")
                return [try notify(locKey, kind: .secretChat, id: id, chat: "secret:\(id)")]
            }
            let secretChatId = try custom.id("encryption_id")
            if custom.has("random_id"), secretChatId != nil, !custom.has("msg_id") {
                return try secretMessage(locKey)
            }
            guard let messageId = try custom.id("msg_id") else {
                return note("\(locKey): no msg_id, nothing to notify")
            }
            let chat = try requireChat()
            if TelegramAdapter.isReaction(locKey) {
                return try reaction(try notify(locKey, kind: .reaction, id: messageId, chat: chat))
            }
            if locKey.hasPrefix("PINNED_") {
                return [try notify(locKey, kind: .pinned, id: messageId, chat: chat)]
            }
            return [try message(locKey, id: messageId, chat: chat)]
        }

        /// A message notify, or an `edit` when the push carries `edit_date`.
        func message(_ locKey: String?, id: Int64, chat: String) throws(IngestError) -> Event {
            let kind: NotificationKind = try custom.flag("mention") == true ? .mention : .message
            guard try custom.integer("edit_date") != nil else {
                return try notify(locKey, kind: kind, id: id, chat: chat)
            }
            let text = try rendered(locKey)
            return event(.edit(Event.Edit(chat: chat, kind: kind, id: id, title: text.title, body: text.body, partial: true)))
        }

        /// The `notify` of `kind` and `id` in `chat`, its text rendered from the push.
        func notify(_ locKey: String?, kind: NotificationKind, id: Int64, chat: String, text: TelegramText.Rendered? = nil)
            throws(IngestError) -> Event
        {
            let text = try orElse(text, rendered(locKey)) ?? TelegramText.Rendered()
            let date = try orElse(custom.date("date"), push.fields.date("date")) ?? deliveryDate
            let silent = Self.silent(custom) ?? Self.silent(push.fields) ?? false
            let thread = try custom.id("topic_id").map { "topic:\($0)" }
            return event(
                .notify(
                    Event.Notify(
                        chat: chat, kind: kind, id: id, date: date, silent: silent, partial: true,
                        title: text.title, body: text.body, sender: text.sender, thread: thread)))
        }

        /// Whether `fields` mark the push silent: `silent` present and not `0`/`false`/`""`.
        /// TDLib treats the field's presence as silent and Telegram-iOS any non-zero number, so
        /// an unusual value is silent rather than an error.
        static func silent(_ fields: PayloadObject) -> Bool? {
            guard fields.has("silent") else { return nil }
            return (try? fields.flag("silent")) ?? true
        }

        /// The first FCM delivery time within 28 days before and 5 seconds after the receive
        /// time (TDLib ignores others), else the receive time.
        var deliveryDate: Int64 {
            push.deliveryDates.first { (receivedAt - 28 * 86_400)...(receivedAt + 5) ~= $0 } ?? receivedAt
        }

        /// The push's text: the iOS alert when it has one, else the key and arguments rendered.
        func rendered(_ locKey: String?) throws(IngestError) -> TelegramText.Rendered {
            if let alert = push.alert {
                let sender = chat?.hasPrefix("user:") == true ? alert.title : nil
                return TelegramText.Rendered(title: alert.title, body: alert.body, sender: sender)
            }
            guard let locKey else { return TelegramText.Rendered() }
            let groupPin =
                locKey.hasPrefix("PINNED_")
                && (chat?.hasPrefix("chat:") == true || (chat?.hasPrefix("channel:") == true && hasGroupSender))
            return TelegramText.render(locKey: locKey, args: push.args, groupPin: groupPin)
        }

        /// Whether the push names the member of a group who acted (`chat_from_*`).
        var hasGroupSender: Bool {
            ["chat_from_id", "chat_from_broadcast_id", "chat_from_group_id"].contains(where: custom.has)
        }

        /// The events of a reaction push: the reaction to a message is one object, the message
        /// (as TDLib keeps one reaction notification per message), so `READ_REACTION` of that
        /// message clears it. The first reaction creates the notification; a later one, from
        /// another person, is a duplicate `notify` and an `edit` that shows its text, so the
        /// notification tells the newest reaction instead of keeping the first.
        func reaction(_ notify: Event) throws(IngestError) -> [Event] {
            guard case .notify(let n) = notify.payload else { return [notify] }
            let edit = event(.edit(Event.Edit(chat: n.chat, kind: .reaction, id: n.id, title: n.title, body: n.body, partial: true)))
            return [notify, edit]
        }

        /// A call key: a ring notifies the call; a missed, declined or ended call ends it.
        func call(_ locKey: String, _ action: TelegramAdapter.CallAction) throws(IngestError) -> [Event] {
            let chat = try requireChat()
            switch action {
            case .ring:
                guard let callId = try custom.id("call_id") else { return note("\(locKey): no call_id, no call to ring") }
                return [try notify(locKey, kind: .call, id: callId, chat: chat)]
            case .end:
                var events: [Event] = []
                if let callId = try custom.id("call_id") { events.append(event(.endCall(chat: chat, id: callId))) }
                if let messageId = try custom.id("msg_id") { events.append(try message(locKey, id: messageId, chat: chat)) }
                return events.isEmpty ? note("\(locKey): neither call_id nor msg_id, no call to end") : events
            }
        }

        /// A new message in a secret chat: a `secretChat` notification in that chat.
        func secretMessage(_ locKey: String) throws(IngestError) -> [Event] {
            guard let secretId = try custom.id("encryption_id") else {
                return note("\(locKey): no encryption_id, the secret chat is unknown")
            }
            let id: Int64
            if let randomId = try custom.integer("random_id") {
                id = randomId > 0 ? randomId : StableID.of("random_id:\(randomId)")
            } else {
                id = secretId
            }
            var text = try rendered(locKey)
            if push.alert == nil, locKey == "ENCRYPTED_MESSAGE" { text.body = TelegramText.secretMessageBody }
            return [try notify(locKey, kind: .secretChat, id: id, chat: "secret:\(secretId)", text: text)]
        }

        /// A service announcement, shown from Telegram's service account.
        func announcement() throws(IngestError) -> [Event] {
            guard let text = try push.fields.nonEmptyString("message") else {
                return note("MESSAGE_ANNOUNCEMENT: no message text, nothing to show")
            }
            // Not the announcement id itself: chat 777000 has real messages with small ids, which
            // the announcement must neither collide with nor be hidden by (a read up to them).
            let key = try custom.id("announcement").map(String.init) ?? text
            let id = StableID.of("announcement:\(key)")
            return [
                try notify(
                    "MESSAGE_ANNOUNCEMENT", kind: .message, id: id, chat: TelegramAdapter.serviceChat,
                    text: .init(title: "Telegram", body: text, sender: "Telegram"))
            ]
        }

        /// An iOS push with rendered text and no key, or the VoIP payload of a call.
        func renderedAlert() throws(IngestError) -> [Event] {
            if let callId = try custom.id("call_id"), custom.has("call_ah") || push.alert != nil {
                return [try notify(nil, kind: .call, id: callId, chat: try requireChat())]
            }
            guard push.alert != nil else {
                return note("iOS push without loc-key or aps.alert: nothing to show")
            }
            let chat = try requireChat()
            // A secret chat's push has no msg_id; TDLib lets `encryption_id` name the chat
            // whatever other ids the push carries.
            if custom.has("encryption_id"), !custom.has("msg_id") { return try secretMessage("ENCRYPTED_MESSAGE") }
            if custom.has("story_id") { return note("iOS story push (story_id): stories are not notifications here") }
            guard let messageId = try custom.id("msg_id") else {
                return note("iOS push with an alert but no msg_id: no object to notify")
            }
            if push.iOSReaction {
                return try reaction(try notify(nil, kind: .reaction, id: messageId, chat: chat))
            }
            return [try message(nil, id: messageId, chat: chat)]
        }
    }
}
