/**
 * Model texts with tool calls, and what every front end must read from them: the same scripts go
 * through the AI SDK provider, ChatTriton and trtllm-openai (with the official openai client), so
 * the three front ends are held to one answer for the same model text.
 */
export interface ToolScript {
  readonly name: string;
  /** The built-in template whose call format the text is in. */
  readonly template: 'chatml' | 'llama3';
  /** What the model writes. */
  readonly text: string;
  /** The reply text around the calls. */
  readonly content: string;
  /** The calls, by function name and arguments. */
  readonly calls: readonly (readonly [string, Record<string, unknown>])[];
}

const hermes = (name: string, args: object): string =>
  `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
const MALFORMED = '<tool_call>\n{"name": "get_weather", "arguments": {"city": \n</tool_call>';

export const TOOL_SCRIPTS: readonly ToolScript[] = [
  {
    name: 'Hermes: one call',
    template: 'chatml',
    text: hermes('get_weather', { city: 'Paris' }),
    content: '',
    calls: [['get_weather', { city: 'Paris' }]],
  },
  {
    name: 'Hermes: text before a call',
    template: 'chatml',
    text: `Let me check.\n${hermes('get_weather', { city: 'Rome', unit: 'celsius' })}`,
    content: 'Let me check.',
    calls: [['get_weather', { city: 'Rome', unit: 'celsius' }]],
  },
  {
    name: 'Hermes: two parallel calls',
    template: 'chatml',
    text: `${hermes('get_weather', { city: 'Oslo' })}\n${hermes('get_time', { zone: 'CET' })}`,
    content: '',
    calls: [
      ['get_weather', { city: 'Oslo' }],
      ['get_time', { zone: 'CET' }],
    ],
  },
  {
    name: 'Hermes: non-ASCII arguments',
    template: 'chatml',
    text: hermes('get_weather', { city: 'Zürich – 東京 🌤' }),
    content: '',
    calls: [['get_weather', { city: 'Zürich – 東京 🌤' }]],
  },
  {
    name: 'Hermes: a malformed call stays text',
    template: 'chatml',
    text: MALFORMED,
    content: MALFORMED,
    calls: [],
  },
  {
    name: 'Llama 3 JSON: two calls',
    template: 'llama3',
    text: '{"name": "get_weather", "parameters": {"city": "Lima"}}; {"name": "get_time", "parameters": {"zone": "PET"}}',
    content: '',
    calls: [
      ['get_weather', { city: 'Lima' }],
      ['get_time', { zone: 'PET' }],
    ],
  },
  {
    name: 'Llama 3 JSON: after <|python_tag|>, non-ASCII',
    template: 'llama3',
    text: '<|python_tag|>{"name": "get_weather", "parameters": {"city": "São Paulo"}}',
    content: '',
    calls: [['get_weather', { city: 'São Paulo' }]],
  },
];

/** The functions the scripts call, as JSON Schema. */
export const TOOL_PARAMETERS: Readonly<Record<'get_weather' | 'get_time', Record<string, unknown>>> = {
  get_weather: {
    type: 'object',
    properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['city'],
  },
  get_time: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] },
};

/** The two functions as OpenAI tool definitions (what trtllm-openai and ChatTriton.bindTools take). */
export const OPENAI_TOOLS = [
  {
    type: 'function' as const,
    function: {
      name: 'get_weather',
      description: 'Weather in a city',
      parameters: TOOL_PARAMETERS.get_weather,
    },
  },
  {
    type: 'function' as const,
    function: { name: 'get_time', description: 'Time in a zone', parameters: TOOL_PARAMETERS.get_time },
  },
];

/** The model that accumulates its tokens: every script, non-ASCII too, arrives as written. */
export const TOOL_MODEL = 'tensorrt_llm_bls';
