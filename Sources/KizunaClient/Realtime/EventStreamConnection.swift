import Foundation
import KizunaCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One HTTP connection to an event stream, as the bytes it delivers.
///
/// A URLSession data delegate hands each chunk over as it arrives (this works the same in FoundationNetworking on
/// Linux, which has no `bytes(for:)`). An answer that is not `200 text/event-stream` ends the stream with the
/// server's error. Ending the iteration cancels the request.
enum EventStreamConnection {
    static func open(_ request: URLRequest, idleTimeout: Duration) -> AsyncThrowingStream<Data, any Error> {
        AsyncThrowingStream { continuation in
            let delegate = Delegate(continuation: continuation)
            let configuration = URLSessionConfiguration.ephemeral
            // The server sends a keep-alive comment every 25 s; silence for longer means the connection is dead.
            configuration.timeoutIntervalForRequest = idleTimeout.seconds
            configuration.timeoutIntervalForResource = .infinity
            let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
            let task = session.dataTask(with: request)
            continuation.onTermination = { _ in
                task.cancel()
                session.invalidateAndCancel()
            }
            task.resume()
        }
    }

    private final class Delegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        private let continuation: AsyncThrowingStream<Data, any Error>.Continuation
        // Touched only from the session's serial delegate queue.
        private var failure: (status: Int, response: HTTPURLResponse, body: Data)?

        init(continuation: AsyncThrowingStream<Data, any Error>.Continuation) {
            self.continuation = continuation
        }

        func urlSession(
            _ session: URLSession,
            dataTask: URLSessionDataTask,
            didReceive response: URLResponse,
            completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
        ) {
            if let http = response as? HTTPURLResponse, http.statusCode != 200 {
                failure = (http.statusCode, http, Data())
            }
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            if failure != nil {
                failure?.body.append(data)
            } else {
                continuation.yield(data)
            }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            if let failure {
                let url = task.originalRequest?.url?.absoluteString ?? "the event stream"
                continuation.finish(
                    throwing: KizunaHTTPClient.error(status: failure.status, headers: failure.response, body: failure.body, what: "GET \(url)"))
            } else if let error {
                continuation.finish(throwing: KizunaError(.transport, "The event stream broke: \(error.localizedDescription)"))
            } else {
                continuation.finish()
            }
            session.finishTasksAndInvalidate()
        }
    }
}
