// A result that is a text file written as it is read (an export): its media type, the name a download
// takes, and its text in chunks. REST sends the chunks as they come (the reply's stream pulls the next one
// when the client has taken the last), so an export of any length never sits in memory whole. Agents
// cannot hold a stream: an operation that answers one is REST only (operation.ts servedToAgents).

export class TextStream {
  constructor(
    readonly mediaType: string,
    readonly filename: string,
    readonly chunks: AsyncIterable<string>,
  ) {}
}
